// Parses the policy `interval` (and other spec Durations) into seconds for requeue scheduling.
// Lenient on purpose: admission enforces the pattern, but an unparsable value must never stop requeueing.

/** The spec's default reconcile interval, `5m`. */
export const DEFAULT_INTERVAL_SECONDS = 300;

/** Result of parsing a Duration string. */
export type IntervalParse =
  { readonly ok: true; readonly seconds: number } | { readonly ok: false; readonly message: string };

const UNIT_SECONDS: Readonly<Record<string, number>> = { h: 3600, m: 60, s: 1 };

/**
 * Parses `^([0-9]+[smh])+$` (e.g. `5m`, `1h30m`, `90s`). Empty, missing or all-zero values mean the
 * default (300 s), as a zero interval would turn requeueing into a hot loop.
 * @example parseInterval('1h30m') // { ok: true, seconds: 5400 }
 */
export function parseInterval(value: string | null | undefined): IntervalParse {
  const text = (value ?? '').trim();
  if (text === '') return { ok: true, seconds: DEFAULT_INTERVAL_SECONDS };
  if (!/^([0-9]+[smh])+$/.test(text)) {
    return { ok: false, message: `interval ${JSON.stringify(text)} is not a duration like 5m or 1h30m` };
  }
  let seconds = 0;
  for (const m of text.matchAll(/([0-9]+)([smh])/g)) {
    seconds += Number(m[1]) * (UNIT_SECONDS[m[2] ?? 's'] ?? 1);
  }
  if (!Number.isSafeInteger(seconds))
    return { ok: false, message: `interval ${JSON.stringify(text)} is too large` };
  return { ok: true, seconds: seconds === 0 ? DEFAULT_INTERVAL_SECONDS : seconds };
}
