// Own writes over a trailing cache, by properties: a read never goes back to a version older than one we
// wrote, and the fallback fires only for a write the cache never showed.
import fc from 'fast-check';
import { OwnWrites, newerVersion, type Versioned } from './own-writes.js';

const at = (version: number | undefined): Versioned | undefined =>
  version === undefined ? undefined : { metadata: { resourceVersion: String(version) } };

/** One step of a run: the clock moves on by `advance`, then a read sees the cache at `version`. */
const step = fc.record({
  advance: fc.integer({ min: 0, max: 20_000 }),
  version: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
});

describe('OwnWrites', () => {
  it('never lets a read go back to a version not newer than the one a write was based on', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(step, { maxLength: 30 }), (basedOn, steps) => {
        let now = 0;
        const expired: string[] = [];
        const writes = new OwnWrites<string>({
          store: 's',
          expiryMs: 60_000,
          now: () => now,
          onExpired: (store) => expired.push(store),
        });
        writes.record('k', 'ours', String(basedOn));
        let seenNewer = false;
        for (const { advance, version } of steps) {
          now += advance;
          const pending = writes.pending('k', at(version));
          if (version !== undefined && version > basedOn) seenNewer = true;
          if (pending !== undefined) {
            expect(pending.value).toBe('ours');
            continue;
          }
          // No write pending: the cache showed it (a newer version), now or before, or the fallback fired.
          expect(seenNewer || expired.length === 1).toBe(true);
          if (!seenNewer) expect(now).toBeGreaterThan(60_000);
        }
      }),
    );
  });

  it('fires the fallback only for a write the cache never showed, and counts it once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(step, { maxLength: 30 }), (basedOn, steps) => {
        let now = 0;
        const expired: string[] = [];
        const writes = new OwnWrites<string>({
          store: 'candidate-status',
          expiryMs: 30_000,
          now: () => now,
          onExpired: (store) => expired.push(store),
        });
        writes.record('k', 'ours', String(basedOn));
        let shown = false;
        for (const { advance, version } of steps) {
          now += advance;
          const before = expired.length;
          writes.pending('k', at(version));
          if (expired.length > before) expect(shown).toBe(false);
          if (version !== undefined && version > basedOn) shown = true;
        }
        expect(expired.length).toBeLessThanOrEqual(1);
        expect(expired.every((s) => s === 'candidate-status')).toBe(true);
      }),
    );
  });

  it('keeps a created object pending until the cache has it, whatever its version', () => {
    let now = 0;
    const writes = new OwnWrites<string>({ store: 's', expiryMs: 1_000, now: () => now });
    writes.record('ns/plan', 'created', undefined);
    expect(writes.pending('ns/plan', undefined)?.value).toBe('created');
    now = 500;
    expect(writes.pending('ns/plan', at(1))).toBeUndefined();
    expect(writes.size).toBe(0);
  });

  it('says by content what showing a write means when the store is given one', () => {
    const writes = new OwnWrites<string, { metadata: object; phase: string }>({
      store: 's',
      expiryMs: 1_000,
      now: () => 0,
      shows: (cached, write) => cached.phase === write.value,
    });
    writes.record('k', 'Applied', '7');
    expect(writes.pending('k', { metadata: { resourceVersion: '9' }, phase: 'Applying' })?.value).toBe(
      'Applied',
    );
    expect(writes.pending('k', { metadata: { resourceVersion: '9' }, phase: 'Applied' })).toBeUndefined();
  });

  it('compares integer versions as numbers and opaque ones by change', () => {
    expect(newerVersion('10', '9')).toBe(true);
    expect(newerVersion('9', '10')).toBe(false);
    expect(newerVersion('9', '9')).toBe(false);
    expect(newerVersion('b', 'a')).toBe(true);
    expect(newerVersion('a', 'a')).toBe(false);
    expect(newerVersion('1', undefined)).toBe(true);
    expect(newerVersion(undefined, '1')).toBe(false);
  });
});
