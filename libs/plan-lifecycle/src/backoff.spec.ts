// Spec Errors: transient failures are counted in transient_failure_count and used for exponential backoff.
import fc from 'fast-check';
import { BACKOFF_CAP_SECONDS, transientBackoffSeconds } from './backoff.js';

describe('transient backoff (transient_failure_count -> exponential delay with jitter)', () => {
  it('doubles from 5 s per consecutive transient failure without jitter', () => {
    expect([1, 2, 3, 4, 5].map((n) => transientBackoffSeconds(n, 0))).toEqual([5, 10, 20, 40, 80]);
  });

  it('is capped at 300 s however many failures accumulate', () => {
    expect(transientBackoffSeconds(9, 0)).toBe(300);
    expect(transientBackoffSeconds(1000, 0)).toBe(300);
  });

  it('jitter shortens the delay by at most a quarter and never exceeds the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (n, r) => {
          const nominal = transientBackoffSeconds(n, 0);
          const delay = transientBackoffSeconds(n, r);
          return delay <= nominal && delay >= nominal * 0.75 && delay <= BACKOFF_CAP_SECONDS;
        },
      ),
    );
  });

  it('different jitter draws spread retries of the same failure count', () => {
    expect(transientBackoffSeconds(3, 0.1)).not.toBe(transientBackoffSeconds(3, 0.9));
  });
});
