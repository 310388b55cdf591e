// Which fenced commands the gateway still applies, and what a stored lease record may look like.
import { decodeLeaseRecord, encodeLeaseRecord, fenceAdmits, type LeaseRecord } from './leader-lease.js';

const current: LeaseRecord = { holder: 'b', epoch: 5, durationMs: 15_000, handoverSeq: 100 };

test("the current epoch's commands are always admitted", () => {
  expect(fenceAdmits(current, 5, 1)).toBe(true);
  expect(fenceAdmits(current, 5, 10_000)).toBe(true);
  expect(fenceAdmits({ ...current, holder: '' }, 5, 10_000)).toBe(true); // released: still its commands
});

test("the previous epoch's commands only up to the handover point; older epochs and no lease never", () => {
  expect(fenceAdmits(current, 4, 100)).toBe(true);
  expect(fenceAdmits(current, 4, 101)).toBe(false);
  expect(fenceAdmits(current, 3, 1)).toBe(false);
  expect(fenceAdmits({ holder: 'b', epoch: 5, durationMs: 1 }, 4, 1)).toBe(false);
  expect(fenceAdmits(null, 5, 1)).toBe(false);
  expect(fenceAdmits(current, 6, 1)).toBe(false); // a future epoch is no epoch of this lease
});

test('records round-trip; malformed ones read as no lease', () => {
  expect(decodeLeaseRecord(encodeLeaseRecord(current))).toEqual(current);
  const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
  expect(decodeLeaseRecord(bytes({ holder: 'a', epoch: 1.5, durationMs: 1 }))).toBeNull();
  expect(decodeLeaseRecord(bytes({ holder: 'a', epoch: 1, durationMs: 0 }))).toBeNull();
  expect(decodeLeaseRecord(new TextEncoder().encode('{'))).toBeNull();
});
