// A post-apply snapshot stands for one verification pass of the plan just applied, nothing else.
import type { AppliedSnapshotV1 } from '@rolepolicy/contracts';
import { AppliedSnapshots, type AppliedSnapshotExpectation } from './applied-snapshots.js';

const SCOPE = `sha256:${'a'.repeat(64)}`;
const FP = `sha256:${'f'.repeat(64)}`;

function message(overrides: Partial<AppliedSnapshotV1> = {}): AppliedSnapshotV1 {
  const ref = (kind: string, name: string, uid?: string) => ({
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind,
    namespace: 'team-a',
    name,
    ...(uid === undefined ? {} : { uid }),
  });
  return {
    v: 1,
    plan: ref('PostgresPolicyPlan', 'orders-abc'),
    policy: ref('PostgresPolicy', 'orders', 'uid-1'),
    target: 'team-a/orders-db',
    scopeDigest: SCOPE,
    readAt: '2026-11-27T09:00:00.000Z',
    fingerprint: FP,
    // Only the head: the store passes the snapshot through without reading it.
    snapshot: { server_version_num: 150000, current_database: 'orders' } as AppliedSnapshotV1['snapshot'],
    ...overrides,
  };
}

const expected: AppliedSnapshotExpectation = {
  uid: 'uid-1',
  plan: 'orders-abc',
  target: 'team-a/orders-db',
  scopeDigest: SCOPE,
};

describe('applied snapshots', () => {
  let now = 0;
  const store = () => new AppliedSnapshots(10_000, 3, () => now);
  beforeEach(() => {
    now = 0;
  });

  it('gives the matching snapshot to one pass only', () => {
    const snapshots = store();
    snapshots.put(message());
    expect(snapshots.take('team-a/orders', expected)).toEqual({
      // Only the head: the store passes the snapshot through without reading it.
      snapshot: { server_version_num: 150000, current_database: 'orders' } as AppliedSnapshotV1['snapshot'],
      fingerprint: FP,
      readAt: '2026-11-27T09:00:00.000Z',
    });
    expect(snapshots.take('team-a/orders', expected)).toEqual({ miss: 'not_received' });
  });

  it.each([
    ['another plan', { plan: 'orders-old' }, 'other_plan'],
    ['another target', { target: 'team-a/other-db' }, 'other_target'],
    ['another scope', { scopeDigest: `sha256:${'b'.repeat(64)}` }, 'other_scope'],
    ['a recreated policy', { uid: 'uid-2' }, 'other_policy'],
    ['a policy without uid', { uid: undefined }, 'other_policy'],
  ])('refuses a snapshot taken for %s, says so, and drops it', (_, differing, reason) => {
    const snapshots = store();
    snapshots.put(message());
    expect(snapshots.take('team-a/orders', { ...expected, ...differing })).toEqual({ miss: reason });
    expect(snapshots.take('team-a/orders', expected)).toEqual({ miss: 'not_received' });
  });

  it('is dropped unused when the pass expects nothing (inputs moved since the execution was requested)', () => {
    const snapshots = store();
    snapshots.put(message());
    expect(snapshots.take('team-a/orders', null)).toEqual({ miss: 'inputs_changed' });
    expect(snapshots.take('team-a/orders', expected)).toEqual({ miss: 'not_received' });
  });

  it('refuses a stale snapshot', () => {
    const snapshots = store();
    snapshots.put(message());
    now = 10_001;
    expect(snapshots.take('team-a/orders', expected)).toEqual({ miss: 'expired' });
  });

  it('keeps the newest per policy and a bounded number overall', () => {
    const snapshots = store();
    snapshots.put(message({ plan: { ...message().plan, name: 'orders-old' } }));
    snapshots.put(message());
    expect(snapshots.size()).toBe(1);
    for (const name of ['b', 'c', 'd']) {
      snapshots.put(message({ policy: { ...message().policy, name } }));
    }
    expect(snapshots.size()).toBe(3);
    // The oldest (orders) went first.
    expect(snapshots.take('team-a/orders', expected)).toEqual({ miss: 'not_received' });
  });
});
