// Bounded polling for end-to-end tests: wait until a probe yields a value, and on timeout say what was
// awaited and what was last seen (a policy's status, a plan's phase), so a red run explains itself.

/** Options of {@link waitFor}. */
export type WaitOptions = {
  /** Give up after this long (default 20 s; every e2e file must finish well under the 60 s test timeout). */
  readonly timeoutMs?: number;
  /** Poll period (default 100 ms). */
  readonly intervalMs?: number;
  /** What to print on timeout besides `what`, e.g. the object last read. */
  readonly describe?: () => unknown;
};

/** Raised when a wait runs out; the message names the wait and the last observation. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/**
 * Polls `probe` until it returns something other than `undefined`/`false`/`null`.
 * @example const plan = await waitFor('a Pending plan', async () => (await stack.plans('p')).find(isPending));
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const seen = options.describe ? `\nlast seen: ${safeJson(await options.describe())}` : '';
      const failed = lastError ? `\nlast probe error: ${String(lastError)}` : '';
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}${seen}${failed}`);
    }
    await sleep(options.intervalMs ?? 100);
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
