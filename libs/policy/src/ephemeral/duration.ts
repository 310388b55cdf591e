// Ephemeral access durations (`maximumDuration`, `defaultDuration`, `pendingRequestTTL`, `requestedDuration`):
// the spec's pattern `^([0-9]+[smh])+$`, positive, and small enough that a deadline stays a valid date.

/** A parsed duration, or why the text is not one. */
export type DurationParse =
  { readonly ok: true; readonly seconds: number } | { readonly ok: false; readonly message: string };

const PATTERN = /^([0-9]+[smh])+$/;
const PART = /([0-9]+)([smh])/g;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;
/** 100 years: far beyond any sensible grant, far below where `Date` arithmetic loses precision. */
export const MAX_DURATION_SECONDS = 100 * 365 * 24 * 3600;

/**
 * Parses a duration such as `90m` or `1h30m` (parts add up; order and repetition are allowed, as the
 * pattern allows them) into whole seconds.
 *
 * @example parseEphemeralDuration('1h30m') // { ok: true, seconds: 5400 }
 */
export function parseEphemeralDuration(text: string): DurationParse {
  if (!PATTERN.test(text)) {
    return { ok: false, message: 'must match ^([0-9]+[smh])+$ (for example 30m, 1h or 1h30m)' };
  }
  let seconds = 0;
  for (const [, digits, unit] of text.matchAll(PART)) {
    const value = Number(digits);
    seconds += value * UNIT_SECONDS[unit as keyof typeof UNIT_SECONDS];
    if (!Number.isSafeInteger(seconds) || seconds > MAX_DURATION_SECONDS) {
      return { ok: false, message: `must be at most ${MAX_DURATION_SECONDS}s (100 years)` };
    }
  }
  if (seconds === 0) return { ok: false, message: 'must be greater than zero' };
  return { ok: true, seconds };
}

/**
 * The canonical form recorded in `resolvedAccess.grantedDuration` and compared with an approval's
 * `grantedDuration`: whole seconds with the `s` unit.
 *
 * @example canonicalDuration(5400) === '5400s'
 */
export function canonicalDuration(seconds: number): string {
  return `${seconds}s`;
}
