// Retry delay for transient failures: exponential in `transient_failure_count`, capped, with jitter
// passed in (the caller draws it) so a fleet of failing policies does not retry in lock step.

/** First transient retry after 5 s. */
export const BACKOFF_BASE_SECONDS = 5;
/** The delay doubles per consecutive transient failure... */
export const BACKOFF_FACTOR = 2;
/** ...up to 5 minutes, the default interval: retrying slower than a healthy policy reconciles helps nobody. */
export const BACKOFF_CAP_SECONDS = 300;
/** Jitter shortens a delay by up to a quarter, so delays never exceed the cap and never stay in phase. */
export const BACKOFF_JITTER_FRACTION = 0.25;

/**
 * Delay before retry number `failureCount` (1 = first failure): min(cap, base * 2^(n-1)) minus up to 25 %.
 * `jitter` is a uniform draw in [0, 1).
 * @example transientBackoffSeconds(1, 0) // 5
 * @example transientBackoffSeconds(10, 0) // 300
 */
export function transientBackoffSeconds(failureCount: number, jitter: number): number {
  const n = Math.max(1, Math.floor(failureCount));
  const exponent = Math.min(n - 1, 30);
  const nominal = Math.min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * BACKOFF_FACTOR ** exponent);
  const r = Math.min(Math.max(jitter, 0), 1);
  return nominal * (1 - BACKOFF_JITTER_FRACTION * r);
}
