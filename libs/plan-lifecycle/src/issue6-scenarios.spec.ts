// Issue 6 "Must show" scenarios that the pure core decides on its own (the end-to-end versions with
// NATS, PostgreSQL and the emulator come with the wiring): full loops through planner and executor verdicts.
import { RECONCILE_REQUESTED_AT_ANNOTATION } from './resources.js';
import { ENCODING, FakeCluster, at, computed, digest, policy } from './test-support/fixtures.js';
import { createdPlans, executed, reconcileOnce, runExecutor } from './test-support/reconcile.js';

describe('issue 6 scenarios (decision level)', () => {
  it('password rotation: a new Secret version is a new digest, a new plan, and the applied version is recorded', () => {
    const cluster = new FakeCluster(policy());
    const v1 = computed('pw-v1', 1, { passwordSourceVersions: { app: 'app-pw:password:1' } });
    reconcileOnce(cluster, v1, at(0));
    const first = cluster.executions[0]!;
    runExecutor(cluster, first, { changeDigest: v1.changeDigest, changeDigestEncoding: ENCODING }, at(1));
    // The engine binds the source version into the digest: a rotated Secret changes it.
    const v2 = computed('pw-v2', 1, { passwordSourceVersions: { app: 'app-pw:password:2' } });
    const rotation = reconcileOnce(cluster, v2, at(300));
    expect(createdPlans(rotation)).toHaveLength(1);
    expect(rotation.steps.find((s) => s.kind === 'requestExecution')).toMatchObject({
      request: { changeDigest: v2.changeDigest },
    });
    const converged = reconcileOnce(
      cluster,
      computed('none', 0, { passwordSourceVersions: { app: 'app-pw:password:2' } }),
      at(600),
    );
    expect(converged.status.applied_password_source_versions).toEqual({ app: 'app-pw:password:2' });
    expect(JSON.stringify(cluster.planList())).not.toMatch(/SCRAM-SHA-256\$/);
  });

  it('requirePhysicalIdentity: a plan computed with the identifier fails closed when the executor cannot read it', () => {
    const cluster = new FakeCluster(
      policy({ connection: { secretRef: { name: 'db' }, requirePhysicalIdentity: true } }),
    );
    reconcileOnce(cluster, computed('A'), at(0));
    const request = cluster.executions[0]!;
    const ran = runExecutor(
      cluster,
      request,
      {
        changeDigest: digest('A'),
        changeDigestEncoding: ENCODING,
        observed: { physical: null, logical: 'sha256:fp' },
      },
      at(1),
    );
    expect(ran).toBe(false);
    expect(cluster.plan(request.planName).status).toMatchObject({ phase: 'Failed' });
    const blocked = cluster.policy.status?.conditions?.find((c) => c.type === 'TargetIdentityBlocked');
    expect(blocked).toMatchObject({ status: 'True', reason: 'PhysicalIdentityRequired' });
  });

  it('approval then edit with different effects: the approved SQL is never executed, even if already queued', () => {
    const cluster = new FakeCluster(policy({ approval: 'manual' }));
    const [old] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(old!, 'Approved', at(1));
    reconcileOnce(cluster, computed('A'), at(2));
    const queued = cluster.executions[0]!;
    cluster.edit({ grants: [] });
    reconcileOnce(cluster, computed('B'), at(3));
    expect(
      runExecutor(cluster, queued, { changeDigest: digest('B'), changeDigestEncoding: ENCODING }, at(4)),
    ).toBe(false);
    expect(cluster.plan(old!).status?.phase).toBe('Superseded');
  });

  it('forced reconcile: a new annotation value re-plans now and is acknowledged in lastHandledReconcileAt', () => {
    const cluster = new FakeCluster(policy({ approval: 'manual' }));
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(a!, 'Denied', at(1));
    reconcileOnce(cluster, computed('A'), at(2));
    cluster.annotate(RECONCILE_REQUESTED_AT_ANNOTATION, '2026-11-21T12:00:03Z');
    const forced = reconcileOnce(cluster, computed('A'), at(3));
    expect(createdPlans(forced)).toHaveLength(1);
    expect(forced.status.lastHandledReconcileAt).toBe('2026-11-21T12:00:03Z');
  });

  it('suspend then resume: nothing runs while suspended, convergence resumes after', () => {
    const cluster = new FakeCluster(policy({ suspend: true }));
    expect(executed(reconcileOnce(cluster, computed('A'), at(0)))).toEqual([]);
    cluster.edit({ suspend: false });
    const resumed = reconcileOnce(cluster, computed('A'), at(10));
    expect(executed(resumed)).toHaveLength(1);
    expect(resumed.status.conditions?.find((c) => c.type === 'Paused')).toBeUndefined();
  });
});
