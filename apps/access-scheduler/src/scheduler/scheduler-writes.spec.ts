// The access-scheduler's own writes: a status write hides the object until the cache shows a newer
// version, a created plan is not created again until the cache shows it, and a plan status written from a
// result is read on top of the cached plan until the cache shows its phase.
import type { Cached } from '@rolepolicy/contracts';
import { OWN_WRITE_EXPIRY_MS, SchedulerWrites } from './scheduler-writes.js';

type Plan = Cached<'postgrespolicyplan'>;

const plan = (resourceVersion: string, phase?: string): Plan =>
  ({
    metadata: { name: 'p', namespace: 'team-a', resourceVersion },
    spec: {},
    ...(phase === undefined ? {} : { status: { phase, lastError: 'old' } }),
  }) as unknown as Plan;
const versioned = (resourceVersion: string) => ({ metadata: { resourceVersion } });

describe('SchedulerWrites', () => {
  let now = 0;
  let expired: string[] = [];
  const writes = () =>
    new SchedulerWrites(
      () => now,
      (store) => expired.push(store),
    );
  beforeEach(() => {
    now = 1_000;
    expired = [];
  });

  it('a status write is pending until the cache shows a newer version, or is forgotten', () => {
    const w = writes();
    w.statusWritten('request/team-a/a', '5');
    expect(w.statusPending('request/team-a/a', versioned('5'))).toBe(true);
    expect(w.statusPending('request/team-a/a', versioned('6'))).toBe(false);
  });

  it("a request's pass waits for our status write, unless a result came since: then it decides on it", () => {
    const w = writes();
    const key = 'request/team-a/a';
    const active = { metadata: { resourceVersion: '5' }, status: { phase: 'Active' as const } };
    w.statusWritten(key, '5', { phase: 'Revoking' });
    expect(w.requestView(key, active)).toBeNull();
    w.resultArrived(key);
    expect(w.requestView(key, active)).toEqual({
      request: { metadata: { resourceVersion: '5' }, status: { phase: 'Revoking' } },
      chained: true,
    });
    // The write decided on it follows ours without a version: shown by its phase, not by a newer version.
    w.chainedStatusWritten(key, { phase: 'Ended' });
    const revoking = { metadata: { resourceVersion: '6' }, status: { phase: 'Revoking' as const } };
    expect(w.requestView(key, revoking)).toBeNull();
    expect(w.statusPending(key, revoking)).toBe(true);
    const ended = { metadata: { resourceVersion: '7' }, status: { phase: 'Ended' as const } };
    expect(w.requestView(key, ended)).toEqual({ request: ended, chained: false });
  });

  it('a result after the cache showed our write changes nothing: the pass reads the cache', () => {
    const w = writes();
    const key = 'request/team-a/b';
    w.statusWritten(key, '5', { phase: 'Revoking' });
    const shown = { metadata: { resourceVersion: '6' }, status: { phase: 'Revoking' as const } };
    expect(w.requestView(key, shown)).toEqual({ request: shown, chained: false });
    w.resultArrived(key);
    expect(w.requestView(key, shown)).toEqual({ request: shown, chained: false });
  });

  it('a status write the cache never shows goes after the expiry, and is counted', () => {
    const w = writes();
    w.statusWritten('accesspolicy/team-a/read', '5');
    now += OWN_WRITE_EXPIRY_MS + 1;
    expect(w.statusPending('accesspolicy/team-a/read', versioned('5'))).toBe(false);
    expect(expired).toEqual(['access-scheduler-status']);
  });

  it('a created plan is pending until the cache shows it (any version newer than the one re-armed)', () => {
    const w = writes();
    w.planCreated('team-a', 'p', undefined);
    expect(w.planCreatePending('team-a', 'p', undefined)).toBe(true);
    expect(w.planCreatePending('team-a', 'p', plan('1'))).toBe(false);
    w.planCreated('team-a', 'p', '7');
    expect(w.planCreatePending('team-a', 'p', plan('7', 'Failed'))).toBe(true);
    expect(w.planCreatePending('team-a', 'p', plan('8', 'Applying'))).toBe(false);
  });

  it('a plan status written from a result is read on top of the cache until the cache shows its phase', () => {
    const w = writes();
    expect(w.plan('team-a', 'p', undefined)).toBeUndefined();
    w.planStatusWritten('team-a', 'p', { phase: 'Applied', lastError: null });
    const seen = w.plan('team-a', 'p', plan('3', 'Applying'));
    expect(seen?.status).toEqual({ phase: 'Applied', lastError: null });
    const caughtUp = plan('4', 'Applied');
    expect(w.plan('team-a', 'p', caughtUp)).toBe(caughtUp);
  });

  it('re-arming a plan drops the status written from its last result', () => {
    const w = writes();
    w.planStatusWritten('team-a', 'p', { phase: 'Failed' });
    w.planCreated('team-a', 'p', '3');
    const cached = plan('3', 'Applying');
    expect(w.plan('team-a', 'p', cached)).toBe(cached);
  });
});
