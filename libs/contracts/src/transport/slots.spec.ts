// A service gives every durable one slot count, or names the durables that need their own (revocations).
import { slotsFor } from './slots.js';

describe('slot counts per durable', () => {
  it('one number applies to every durable; nothing configured means one at a time', () => {
    expect(slotsFor(4, 'executor-execute')).toBe(4);
    expect(slotsFor(4, 'executor-scoped-revoke')).toBe(4);
    expect(slotsFor(undefined, 'executor-execute')).toBe(1);
  });

  it('a named durable gets its own count, the others the default', () => {
    const counts = { default: 4, durables: { 'executor-scoped-revoke': 8 } };
    expect(slotsFor(counts, 'executor-scoped-revoke')).toBe(8);
    expect(slotsFor(counts, 'executor-scoped')).toBe(4);
    expect(slotsFor({ default: 2 }, 'executor-scoped')).toBe(2);
  });

  it('refuses a count that is not a positive integer, naming the durable', () => {
    expect(() => slotsFor(0, 'executor-execute')).toThrow(
      'concurrency of executor-execute must be a positive integer, got 0',
    );
    expect(() => slotsFor({ default: 4, durables: { revoke: 1.5 } }, 'revoke')).toThrow(
      'concurrency of revoke must be a positive integer, got 1.5',
    );
    expect(() => slotsFor({ default: -1, durables: { revoke: 2 } }, 'other')).toThrow(/other/);
  });
});
