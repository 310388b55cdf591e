// Timestamps of ephemeral access status: RFC 3339 at whole seconds (the spec's string fields), and back.
// Pure: callers pass `now` in milliseconds.

/** `2026-11-25T16:00:00Z` for a millisecond instant (sub-second part dropped). */
export function timestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Milliseconds of a recorded timestamp, or undefined when absent or unreadable. */
export function instant(text: string | null | undefined): number | undefined {
  if (text == null) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
