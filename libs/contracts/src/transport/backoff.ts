// Redelivery delay for a message whose handler threw: exponential in the delivery count, capped.
// Pure, so the schedule is unit-tested without a server.

/** Bounds of the nak backoff. */
export type BackoffPolicy = {
  readonly initialMs: number;
  readonly maxMs: number;
};

/** Default: 1 s, 2 s, 4 s ... capped at 60 s. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000 };

/**
 * Delay before the next delivery after delivery number `deliveryCount` (1-based) failed.
 * @example nakDelayMs(3, { initialMs: 100, maxMs: 1000 }) // 400
 */
export function nakDelayMs(deliveryCount: number, policy: BackoffPolicy): number {
  const exponent = Math.max(0, Math.min(deliveryCount - 1, 30));
  return Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
}
