// A handler that throws is retried after an exponentially growing delay, capped so retries never stall.
import { nakDelayMs } from './backoff.js';

describe('nak backoff', () => {
  const policy = { initialMs: 100, maxMs: 1000 };

  it('doubles the delay with each failed delivery', () => {
    expect([1, 2, 3, 4].map((n) => nakDelayMs(n, policy))).toEqual([100, 200, 400, 800]);
  });

  it('never exceeds the cap, even after many deliveries', () => {
    expect(nakDelayMs(5, policy)).toBe(1000);
    expect(nakDelayMs(10_000, policy)).toBe(1000);
  });
});
