// Leader election rules: a replica leads when the Lease is free, its own, or unrenewed for longer than
// its duration as measured on the local clock; otherwise it follows.
import { decideLease, leaseSpecFor, sameRecord, type LeaseRecord } from './lease-decision.js';

const held = (holder: string, renewTime = '2026-01-01T00:00:00.000000Z'): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 10,
  renewTime,
  leaseTransitions: 3,
});

describe('decideLease', () => {
  test('a missing Lease is created', () => {
    expect(decideLease(undefined, 'a', 0, 10)).toEqual({ kind: 'create' });
  });

  test('the holder renews its own Lease', () => {
    expect(decideLease({ record: held('a'), observedAtMs: 0 }, 'a', 99_999, 10)).toEqual({ kind: 'renew' });
  });

  test('another holder is followed while the Lease is fresher than its duration', () => {
    expect(decideLease({ record: held('b'), observedAtMs: 1_000 }, 'a', 11_000, 10)).toEqual({
      kind: 'follow',
      holder: 'b',
      expiresAtMs: 11_000,
    });
  });

  test('a Lease unchanged for longer than its duration is taken over', () => {
    expect(decideLease({ record: held('b'), observedAtMs: 1_000 }, 'a', 11_001, 10)).toEqual({
      kind: 'takeover',
      previousHolder: 'b',
    });
  });

  test('a released Lease (empty holder) is taken over at once', () => {
    expect(decideLease({ record: held(''), observedAtMs: 0 }, 'a', 0, 10)).toEqual({
      kind: 'takeover',
      previousHolder: undefined,
    });
  });

  test('expiry uses the local observation time, not the renewTime written by another clock', () => {
    const skewed = held('b', '1999-01-01T00:00:00.000000Z');
    expect(decideLease({ record: skewed, observedAtMs: 5_000 }, 'a', 6_000, 10).kind).toBe('follow');
  });
});

describe('leaseSpecFor', () => {
  test('a takeover counts a transition; a renewal keeps the count', () => {
    expect(leaseSpecFor({ kind: 'takeover', previousHolder: 'b' }, held('b'), 'a', 10)).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 10,
      leaseTransitions: 4,
      acquire: true,
    });
    expect(leaseSpecFor({ kind: 'renew' }, held('a'), 'a', 10).leaseTransitions).toBe(3);
  });
});

test('sameRecord compares holder, renewTime, duration and transitions', () => {
  expect(sameRecord(held('a'), held('a'))).toBe(true);
  expect(sameRecord(held('a'), held('a', '2026-01-01T00:00:01.000000Z'))).toBe(false);
});
