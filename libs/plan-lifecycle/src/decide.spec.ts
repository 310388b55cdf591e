// The planner's decision table, named after the spec's PostgresPolicy / PostgresPolicyPlan rules and the
// issue's scenarios. Each test drives decideReconcile through an in-memory cluster (no servers).
import { buildPlan } from './plan-builder.js';
import { decideReconcile, reconcileGate } from './decide.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION, type ApprovalMode, type PolicyMode } from './resources.js';
import { ENCODING, FakeCluster, at, computed, digest, policy } from './test-support/fixtures.js';
import { condition, createdPlans, executed, reconcileOnce, runExecutor } from './test-support/reconcile.js';

type Existing = 'none' | 'pending' | 'approved' | 'denied';

function seeded(
  mode: PolicyMode,
  approval: ApprovalMode | undefined,
  existing: Existing,
): { cluster: FakeCluster; seededName: string | null } {
  const spec = approval === undefined ? { mode, approval: null } : { mode, approval };
  const cluster = new FakeCluster(policy(spec));
  if (existing === 'none') return { cluster, seededName: null };
  const { plan } = buildPlan({
    policy: cluster.policy,
    computed: computed('A'),
    existingPlanNames: [],
    now: at(0),
    autoApprove: false,
  });
  cluster.apply([{ kind: 'createPlan', plan, configMap: null }], at(0));
  if (existing === 'approved') cluster.decide(plan.metadata.name, 'Approved', at(1));
  if (existing === 'denied') cluster.decide(plan.metadata.name, 'Denied', at(1));
  return { cluster, seededName: plan.metadata.name };
}

describe('mode x approval x decision (spec: Mode x approval matrix)', () => {
  it.each([
    // mode, approval, existing plan, decision kind, plans created, executions requested
    ['apply', 'auto', 'none', 'execution_requested', 1, 1],
    ['apply', 'auto', 'pending', 'execution_requested', 0, 1],
    ['apply', 'auto', 'approved', 'execution_requested', 0, 1],
    ['apply', 'auto', 'denied', 'rejected', 0, 0],
    ['apply', 'manual', 'none', 'awaiting_approval', 1, 0],
    ['apply', 'manual', 'pending', 'awaiting_approval', 0, 0],
    ['apply', 'manual', 'approved', 'execution_requested', 0, 1],
    ['apply', 'manual', 'denied', 'rejected', 0, 0],
    ['apply', undefined, 'none', 'execution_requested', 1, 1],
    ['observe', 'auto', 'none', 'observed', 1, 0],
    ['observe', 'manual', 'none', 'observed', 1, 0],
    ['observe', 'manual', 'approved', 'observed', 0, 0],
    ['observe', undefined, 'none', 'observed', 1, 0],
    ['plan', 'manual', 'none', 'awaiting_approval', 1, 0],
    ['plan', 'manual', 'approved', 'execution_requested', 0, 1],
    ['plan', 'auto', 'none', 'awaiting_approval', 1, 0],
    ['plan', 'auto', 'approved', 'execution_requested', 0, 1],
    ['plan', undefined, 'pending', 'awaiting_approval', 0, 0],
  ] as const)(
    'mode=%s approval=%s plan=%s -> %s (creates %i, executes %i)',
    (mode, approval, existing, kind, creates, executes) => {
      const { cluster } = seeded(mode, approval, existing);
      const decision = reconcileOnce(cluster, computed('A'), at(10));
      expect(decision.kind).toBe(kind);
      expect(createdPlans(decision)).toHaveLength(creates);
      expect(executed(decision)).toHaveLength(executes);
    },
  );

  it('approval omitted is inferred (apply -> auto, observe -> manual) and raises ApprovalUnset', () => {
    const apply = reconcileOnce(seeded('apply', undefined, 'none').cluster, computed('A'), at(10));
    expect(condition(apply, 'ApprovalUnset')).toMatchObject({ status: 'True', reason: 'InferredFromMode' });
    expect(condition(apply, 'ApprovalUnset')?.message).toContain('"auto"');
    const observe = reconcileOnce(seeded('observe', undefined, 'none').cluster, computed('A'), at(10));
    expect(condition(observe, 'ApprovalUnset')?.message).toContain('"manual"');
  });

  it('ApprovalUnset disappears once approval is set explicitly', () => {
    const { cluster } = seeded('apply', undefined, 'none');
    reconcileOnce(cluster, computed('A', 0), at(10));
    cluster.edit({ approval: 'auto' });
    expect(condition(reconcileOnce(cluster, computed('A', 0), at(20)), 'ApprovalUnset')).toBeUndefined();
  });

  it('observe mode computes drift only: Drifted=True, plan published, approval ignored, no execution', () => {
    const { cluster, seededName } = seeded('observe', 'manual', 'approved');
    const decision = reconcileOnce(cluster, computed('A'), at(10));
    expect(executed(decision)).toEqual([]);
    expect(condition(decision, 'Drifted')).toMatchObject({ status: 'True', reason: 'DriftDetected' });
    expect(condition(decision, 'ApprovalIgnored')).toMatchObject({
      status: 'True',
      reason: 'ObserveModeNeverExecutes',
    });
    expect(decision.status.current_plan_ref).toEqual({ name: seededName });
    expect(decision.status.observed_generation).toBe(1);
    expect(decision.status.last_reconcile_mode).toBe('observe');
  });

  it('observe mode with no drift reports InSync and clears the plan reference before superseding', () => {
    const { cluster, seededName } = seeded('observe', 'manual', 'pending');
    const decision = reconcileOnce(cluster, computed('none', 0), at(10));
    expect(condition(decision, 'Drifted')).toMatchObject({ status: 'False', reason: 'InSync' });
    const kinds = decision.steps.map((s) => s.kind);
    expect(kinds.indexOf('writePolicyStatus')).toBeLessThan(kinds.indexOf('patchPlanStatus'));
    expect(cluster.plan(seededName ?? '').status?.phase).toBe('Superseded');
  });

  it('plan mode with approval auto never self-approves and says so', () => {
    const decision = reconcileOnce(seeded('plan', 'auto', 'none').cluster, computed('A'), at(10));
    expect(condition(decision, 'ApprovalIgnored')).toMatchObject({
      status: 'True',
      reason: 'PlanModeRequiresDecision',
    });
  });
});

describe('auto approval (apply + auto)', () => {
  it('creates the plan already approved with decidedBy, writes status, then requests execution bound to the digest', () => {
    const cluster = new FakeCluster(policy());
    const c = computed('A');
    const decision = reconcileOnce(cluster, c, at(0));
    expect(decision.steps.map((s) => s.kind)).toEqual([
      'createPlan',
      'writePolicyStatus',
      'requestExecution',
    ]);
    const [name] = createdPlans(decision);
    expect(cluster.plan(name ?? '').status).toMatchObject({
      phase: 'Approved',
      decidedBy: { username: 'system:rolepolicy-planner(auto-approval)' },
    });
    expect(cluster.executions[0]).toMatchObject({
      planName: name,
      changeDigest: c.changeDigest,
      changeDigestEncoding: c.changeDigestEncoding,
    });
    expect(condition(decision, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Applying' });
  });

  it('converges: after the executor applies, Ready=True/Reconciled, Drifted=False, observed_generation advances', () => {
    const cluster = new FakeCluster(policy({}, { generation: 3 }));
    const decision = reconcileOnce(cluster, computed('A'), at(0));
    const [request] = cluster.executions;
    expect(executed(decision)).toHaveLength(1);
    expect(
      runExecutor(cluster, request!, { changeDigest: digest('A'), changeDigestEncoding: ENCODING }, at(5)),
    ).toBe(true);
    const status = cluster.policy.status;
    expect(status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
    expect(status?.conditions?.find((c) => c.type === 'Drifted')).toMatchObject({
      status: 'False',
      reason: 'InSync',
    });
    expect(status?.observed_generation).toBe(3);
    const again = reconcileOnce(cluster, computed('none', 0), at(300));
    expect(again.kind).toBe('reconciled');
    expect(again.steps.filter((s) => s.kind === 'createPlan' || s.kind === 'requestExecution')).toEqual([]);
  });

  it('the pass verifying an apply writes nothing when it finds what the Applied result recorded', () => {
    const cluster = new FakeCluster(policy({}, { generation: 2 }));
    reconcileOnce(cluster, computed('A'), at(0));
    const [request] = cluster.executions;
    runExecutor(cluster, request!, { changeDigest: digest('A'), changeDigestEncoding: ENCODING }, at(5));
    const recorded = cluster.policy.status;
    const verify = reconcileOnce(cluster, computed('none', 0), at(6), { verifying: request!.planName });
    expect(verify.kind).toBe('reconciled');
    expect(verify.steps.filter((s) => s.kind === 'writePolicyStatus')).toEqual([]);
    // What a reader sees is the Applied result's status, times included: converged through that plan.
    expect(cluster.policy.status).toEqual(recorded);
    expect(condition(verify, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
      message: `approved plan ${request!.planName} applied`,
      last_transition_time: at(5),
    });
    expect(condition(verify, 'Drifted')).toMatchObject({ status: 'False', reason: 'InSync' });
    expect(verify.status).toMatchObject({
      observed_generation: 2,
      last_successful_reconcile_time: at(5),
      current_plan_ref: { name: request!.planName },
    });
    // A later pass (the interval) records its own reconcile, as every converged pass does.
    const later = reconcileOnce(cluster, computed('none', 0), at(300));
    expect(later.status).toMatchObject({ last_successful_reconcile_time: at(300), current_plan_ref: null });
    expect(condition(later, 'Ready')?.last_transition_time).toBe(at(5));
  });

  it('the pass verifying an apply writes what it finds that the Applied result did not record', () => {
    const cluster = new FakeCluster(policy());
    reconcileOnce(cluster, computed('A'), at(0));
    const [request] = cluster.executions;
    runExecutor(cluster, request!, { changeDigest: digest('A'), changeDigestEncoding: ENCODING }, at(5));
    const warned = computed('none', 0, { warnings: ['schema app has no declared owner'] });
    const verify = reconcileOnce(cluster, warned, at(6), { verifying: request!.planName });
    expect(verify.steps.map((s) => s.kind)).toEqual(['writePolicyStatus']);
    expect(verify.status.plan_warnings).toEqual(['schema app has no declared owner']);
    expect(verify.status.last_successful_reconcile_time).toBe(at(5));
  });

  it('a converged policy reconciled again writes nothing (no self-wake from identical status)', () => {
    const cluster = new FakeCluster(policy());
    reconcileOnce(cluster, computed('none', 0), at(0));
    const again = reconcileOnce(cluster, computed('none', 0), at(0));
    expect(again.steps).toEqual([]);
  });

  it('drift injected by raw SQL is repaired on the next interval with a new plan, even with identical effects', () => {
    const cluster = new FakeCluster(policy());
    const first = reconcileOnce(cluster, computed('A'), at(0));
    runExecutor(
      cluster,
      cluster.executions[0]!,
      { changeDigest: digest('A'), changeDigestEncoding: computed('A').changeDigestEncoding },
      at(1),
    );
    expect(first.requeueAfterSeconds).toBe(300);
    const repair = reconcileOnce(cluster, computed('A'), at(301));
    const [name] = createdPlans(repair);
    expect(name).toMatch(/-2$/);
    expect(executed(repair)).toEqual([name]);
  });
});

describe('manual approval and revalidation (spec: a pending policy plan is revalidated on every reconcile)', () => {
  function manual(): FakeCluster {
    return new FakeCluster(policy({ approval: 'manual' }));
  }

  it('plan mode with manual approval: the plan waits, a person approves, the approved plan executes', () => {
    const cluster = new FakeCluster(policy({ mode: 'plan', approval: 'manual' }));
    const first = reconcileOnce(cluster, computed('A'), at(0));
    const [name] = createdPlans(first);
    expect(condition(first, 'Ready')).toMatchObject({ status: 'True', reason: 'Planned' });
    expect(first.status.observed_generation).toBeUndefined();
    cluster.decide(name!, 'Approved', at(5));
    const second = reconcileOnce(cluster, computed('A'), at(6));
    expect(executed(second)).toEqual([name]);
    expect(second.steps.find((s) => s.kind === 'patchPlanStatus')).toMatchObject({
      purpose: { kind: 'recordApprovedPhase' },
    });
  });

  it('an edit with identical effects keeps the plan and its decision and advances revalidatedGeneration', () => {
    const cluster = manual();
    const [name] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(name!, 'Approved', at(1));
    cluster.edit({ interval: '10m' });
    const decision = reconcileOnce(cluster, computed('A'), at(2));
    expect(createdPlans(decision)).toEqual([]);
    expect(cluster.plan(name!).status).toMatchObject({
      revalidatedGeneration: 2,
      revalidatedAt: at(2),
      decidedBy: { username: 'alice@example.com' },
    });
    expect(executed(decision)).toEqual([name]);
  });

  it('approval then an edit with different effects: the old plan is Superseded and its SQL is never requested', () => {
    const cluster = manual();
    const [old] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(old!, 'Approved', at(1));
    cluster.edit({ grants: [] });
    const decision = reconcileOnce(cluster, computed('B'), at(2));
    const [fresh] = createdPlans(decision);
    expect(cluster.plan(old!).status?.phase).toBe('Superseded');
    expect(cluster.plan(old!).status?.decidedBy).toEqual({ username: 'alice@example.com', groups: ['dba'] });
    expect(cluster.plan(fresh!).status?.phase).toBe('Pending');
    expect(executed(decision)).toEqual([]);
    const kinds = decision.steps.map((s) => s.kind);
    expect(kinds.indexOf('createPlan')).toBeLessThan(kinds.indexOf('patchPlanStatus'));
  });

  it('a pending plan whose effects changed is replaced; at most one plan awaits a decision', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    const [b] = createdPlans(reconcileOnce(cluster, computed('B'), at(1)));
    expect(cluster.plan(a!).status?.phase).toBe('Superseded');
    expect(cluster.plan(a!).status?.conditions?.find((c) => c.type === 'Superseded')).toMatchObject({
      status: 'True',
      reason: 'Superseded',
    });
    expect(
      cluster
        .planList()
        .filter((p) => p.status?.phase === 'Pending')
        .map((p) => p.metadata.name),
    ).toEqual([b]);
  });

  it('effects that vanish supersede the pending plan without a replacement', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    const decision = reconcileOnce(cluster, computed('none', 0), at(1));
    expect(decision.kind).toBe('reconciled');
    expect(createdPlans(decision)).toEqual([]);
    expect(cluster.plan(a!).status?.phase).toBe('Superseded');
    expect(decision.status.current_plan_ref).toBeNull();
  });

  it('Denied -> plan phase Rejected, nothing executed, no new plan in the same cycle', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(a!, 'Denied', at(1));
    const decision = reconcileOnce(cluster, computed('A'), at(2));
    expect(decision.kind).toBe('rejected');
    expect(cluster.plan(a!).status?.phase).toBe('Rejected');
    expect(executed(decision)).toEqual([]);
    expect(createdPlans(decision)).toEqual([]);
    expect(decision.status.current_plan_ref).toBeNull();
    // The phase write wakes the planner: it holds until the interval instead of re-creating at once.
    const woken = reconcileOnce(cluster, computed('A'), at(3));
    expect(woken.kind).toBe('rejection_hold');
    expect(woken.requeueAfterSeconds).toBeLessThanOrEqual(300);
    const later = reconcileOnce(cluster, computed('A'), at(400));
    expect(createdPlans(later)).toHaveLength(1);
  });

  it('a denial written without a transition time still holds re-planning until the interval', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.patchPlan(a!, {
      conditions: [{ type: 'Denied', status: 'True' }],
      decidedBy: { username: 'bob' },
    });
    reconcileOnce(cluster, computed('A'), at(2));
    expect(reconcileOnce(cluster, computed('A'), at(3)).kind).toBe('rejection_hold');
  });

  it('an edit after a denial plans again at once', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(a!, 'Denied', at(1));
    reconcileOnce(cluster, computed('A'), at(2));
    cluster.edit({ interval: '10m' });
    expect(createdPlans(reconcileOnce(cluster, computed('A'), at(3)))).toHaveLength(1);
  });

  it('an approved plan whose target changed is superseded with TargetChanged and re-planned', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(a!, 'Approved', at(1));
    const moved = computed('A', 1, {
      identity: { physical: '999', physicalAvailable: true, logicalFingerprint: 'sha256:fp' },
    });
    const decision = reconcileOnce(cluster, moved, at(2));
    expect(executed(decision)).toEqual([]);
    expect(createdPlans(decision)).toHaveLength(1);
    expect(cluster.plan(a!).status?.phase).toBe('Superseded');
  });
  it('an approved plan whose recorded physical identity cannot be read now fails closed and is re-planned', () => {
    const cluster = manual();
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.decide(a!, 'Approved', at(1));
    const blind = computed('A', 1, {
      identity: { physical: null, physicalAvailable: false, logicalFingerprint: 'sha256:fp' },
    });
    const decision = reconcileOnce(cluster, blind, at(2));
    expect(executed(decision)).toEqual([]);
    const failed = cluster.plan(a!).status;
    expect(failed?.phase).toBe('Failed');
    expect(failed?.lastError).toContain('TargetIdentityUnavailable');
    expect(failed?.conditions?.find((c) => c.type === 'Applied')).toMatchObject({
      status: 'False',
      reason: 'TargetIdentityUnavailable',
    });
    expect(failed?.conditions?.find((c) => c.type === 'Approved')?.status).toBe('True');
    // The new reading gets its own plan, which needs its own decision.
    const [replacement] = createdPlans(decision);
    expect(replacement).not.toBe(a);
    expect(cluster.plan(replacement!).status?.phase).toBe('Pending');
    expect(cluster.plan(replacement!).status?.physicalIdentityAvailable).toBe(false);
    expect(decision.kind).toBe('awaiting_approval');
  });
  it('a snapshot requested before a plan was applied plans nothing and looks again (no duplicate plan)', () => {
    const cluster = new FakeCluster(policy({ mode: 'apply', approval: 'auto' }));
    const first = reconcileOnce(cluster, computed('A'), at(0));
    const [name] = createdPlans(first);
    const [request] = first.steps.flatMap((s) => (s.kind === 'requestExecution' ? [s.request] : []));
    runExecutor(cluster, request!, { changeDigest: digest('A'), changeDigestEncoding: ENCODING }, at(10));
    expect(cluster.plan(name!).status?.phase).toBe('Applied');
    // A pass whose inspection started at t=5 (before the apply at t=10) still sees the old changes.
    const stale = reconcileOnce(cluster, computed('A', 1, { snapshotRequestedAt: at(5) }), at(12));
    expect(stale.kind).toBe('stale_snapshot');
    expect(createdPlans(stale)).toEqual([]);
    expect(executed(stale)).toEqual([]);
    expect(stale.requeueAfterSeconds).toBe(1);
    // An inspection requested after the apply is trusted: real drift is planned.
    const fresh = reconcileOnce(cluster, computed('A', 1, { snapshotRequestedAt: at(11) }), at(13));
    expect(createdPlans(fresh)).toHaveLength(1);
  });
  it('an execution request carries the identity recorded on the plan it was decided for', () => {
    const cluster = new FakeCluster(policy({ mode: 'apply', approval: 'auto' }));
    const decision = reconcileOnce(cluster, computed('A'), at(0));
    const [request] = decision.steps.flatMap((s) => (s.kind === 'requestExecution' ? [s.request] : []));
    expect(request?.approvedIdentity).toEqual({ physical: '7412330000000000001', logical: 'sha256:fp' });
  });
});

describe('policy status bookkeeping', () => {
  it('suspend: nothing is inspected or planned; Paused=True, Ready=False/Suspended; requeue at interval', () => {
    const p = policy({ suspend: true, interval: '1h30m' });
    expect(reconcileGate(p, { kind: 'clear' })).toEqual({ kind: 'suspended', intervalSeconds: 5400 });
    const cluster = new FakeCluster(p);
    const decision = reconcileOnce(cluster, computed('A'), at(0));
    expect(decision.kind).toBe('suspended');
    expect(decision.steps.map((s) => s.kind)).toEqual(['writePolicyStatus']);
    expect(condition(decision, 'Paused')).toMatchObject({ status: 'True', reason: 'Suspended' });
    expect(condition(decision, 'Ready')).toMatchObject({ status: 'False', reason: 'Suspended' });
    expect(decision.requeueAfterSeconds).toBe(5400);
  });

  it('interval requeue follows spec.interval (5m default, 1h30m)', () => {
    expect(reconcileOnce(new FakeCluster(policy()), computed('n', 0), at(0)).requeueAfterSeconds).toBe(300);
    expect(
      reconcileOnce(new FakeCluster(policy({ interval: '1h30m' })), computed('n', 0), at(0))
        .requeueAfterSeconds,
    ).toBe(5400);
  });

  it('an invalid interval is an InvalidSpec failure, retried at the default interval', () => {
    const decision = reconcileOnce(new FakeCluster(policy({ interval: '5 minutes' })), computed('A'), at(0));
    expect(decision.kind).toBe('invalid_spec');
    expect(condition(decision, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(decision.requeueAfterSeconds).toBe(300);
  });

  it('force reconcile: the annotation value is copied to lastHandledReconcileAt after a successful reconcile', () => {
    const cluster = new FakeCluster(policy());
    cluster.annotate(RECONCILE_REQUESTED_AT_ANNOTATION, '2026-11-21T12:00:00Z');
    const decision = reconcileOnce(cluster, computed('n', 0), at(0));
    expect(decision.status.lastHandledReconcileAt).toBe('2026-11-21T12:00:00Z');
  });

  it('force reconcile is not reported handled when the reconcile failed', () => {
    const cluster = new FakeCluster(policy());
    cluster.annotate(RECONCILE_REQUESTED_AT_ANNOTATION, 'now');
    const decision = reconcileOnce(
      cluster,
      {
        kind: 'failed',
        error: { class: 'transient', reason: 'DatabaseConnectionFailed', message: 'refused' },
      },
      at(0),
    );
    expect(decision.status.lastHandledReconcileAt).toBeUndefined();
  });

  it('generation tracking: last_attempted_generation always, observed_generation only on success', () => {
    const cluster = new FakeCluster(
      policy({ approval: 'manual' }, { generation: 5 }, { observed_generation: 4 }),
    );
    const waiting = reconcileOnce(cluster, computed('A'), at(0));
    expect(waiting.status).toMatchObject({ last_attempted_generation: 5, observed_generation: 4 });
    const failed = reconcileOnce(
      cluster,
      { kind: 'failed', error: { class: 'permanent', reason: 'InsufficientPrivileges', message: 'denied' } },
      at(1),
    );
    expect(failed.status).toMatchObject({ last_attempted_generation: 5, observed_generation: 4 });
    const converged = reconcileOnce(cluster, computed('n', 0), at(2));
    expect(converged.status).toMatchObject({
      last_attempted_generation: 5,
      observed_generation: 5,
      last_successful_reconcile_time: at(2),
    });
  });

  it('transient failures are counted and backed off exponentially; a success resets the count', () => {
    const cluster = new FakeCluster(policy());
    const outage = {
      kind: 'failed',
      error: { class: 'transient', reason: 'DatabaseConnectionFailed', message: 'connection refused' },
    } as const;
    const delays = [1, 2, 3].map((i) => reconcileOnce(cluster, outage, at(i)).requeueAfterSeconds);
    expect(delays).toEqual([5, 10, 20]);
    expect(cluster.policy.status?.transient_failure_count).toBe(3);
    expect(condition(reconcileOnce(cluster, outage, at(4)), 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'DatabaseConnectionFailed',
    });
    const recovered = reconcileOnce(cluster, computed('n', 0), at(5));
    expect(recovered.status.transient_failure_count).toBe(0);
    expect(recovered.status.last_error).toBeNull();
    expect(condition(recovered, 'Degraded')).toBeUndefined();
  });

  it('a permanent failure resets the transient count and waits for the interval', () => {
    const cluster = new FakeCluster(policy({}, {}, { transient_failure_count: 4 }));
    const decision = reconcileOnce(
      cluster,
      { kind: 'failed', error: { class: 'permanent', reason: 'MissingDatabaseObject', message: 'schema x' } },
      at(0),
    );
    expect(decision.status.transient_failure_count).toBe(0);
    expect(decision.requeueAfterSeconds).toBe(300);
  });

  it('last_error never contains secrets', () => {
    const cluster = new FakeCluster(policy());
    const decision = reconcileOnce(
      cluster,
      {
        kind: 'failed',
        error: {
          class: 'transient',
          reason: 'DatabaseConnectionFailed',
          message: `could not connect to postgres://admin:s3cr3t@db:5432/app (PASSWORD 'hunter2')`,
        },
      },
      at(0),
    );
    expect(JSON.stringify(decision)).not.toMatch(/s3cr3t|hunter2/);
    expect(decision.status.last_error).toContain('[REDACTED]');
  });

  it('conflict: the later policy gets Conflict=True, Degraded, and plans nothing', () => {
    const cluster = new FakeCluster(policy());
    const decision = reconcileOnce(cluster, computed('A'), at(0), {
      conflict: {
        kind: 'conflict',
        peers: [{ namespace: 'team-a', name: 'alpha', roles: ['app'], schemas: [] }],
        message:
          'an earlier policy already manages these on the same database: team-a/alpha (roles: app; schemas: -)',
      },
    });
    expect(decision.kind).toBe('conflict');
    expect(condition(decision, 'Conflict')).toMatchObject({ status: 'True', reason: 'ConflictingPolicy' });
    expect(condition(decision, 'Ready')).toMatchObject({ status: 'False', reason: 'ConflictingPolicy' });
    expect(decision.steps.filter((s) => s.kind !== 'writePolicyStatus')).toEqual([]);
    expect(decision.status.last_error).toContain('team-a/alpha');
  });

  it('requirePhysicalIdentity with an unreadable identity refuses planning', () => {
    const cluster = new FakeCluster(
      policy({ connection: { secretRef: { name: 'db' }, requirePhysicalIdentity: true } }),
    );
    const blind = computed('A', 1, {
      identity: { physical: null, physicalAvailable: false, logicalFingerprint: 'sha256:fp' },
    });
    const decision = reconcileOnce(cluster, blind, at(0));
    expect(decision.kind).toBe('identity_blocked');
    expect(createdPlans(decision)).toEqual([]);
    expect(condition(decision, 'TargetIdentityBlocked')).toMatchObject({
      status: 'True',
      reason: 'PhysicalIdentityRequired',
    });
    expect(condition(decision, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PhysicalIdentityRequired',
    });
  });

  it('additive mode with ensure: absent assertions -> AbsenceAssertionsIgnored warning condition', () => {
    const cluster = new FakeCluster(
      policy({
        reconciliation_mode: 'additive',
        grants: [
          {
            ensure: 'absent',
            object: { type: 'schema', name: 'inventory' },
            privileges: ['CREATE'],
            role: 'app',
          },
        ],
      }),
    );
    const decision = reconcileOnce(cluster, computed('n', 0), at(0));
    expect(condition(decision, 'AbsenceAssertionsIgnored')).toMatchObject({
      status: 'True',
      reason: 'AdditiveModeNeverRevokes',
    });
    expect(condition(decision, 'Ready')).toMatchObject({ status: 'True' });
  });

  it('adopt-mode owner transfer without allow_schema_owner_transfers: plan published, not executed, OwnerTransferBlocked', () => {
    const cluster = new FakeCluster(policy({ reconciliation_mode: 'adopt' }));
    const c = computed('A', 1, {
      ownerTransferBlocked: true,
      warnings: ['adopt mode transfers ownership of schema inventory to app'],
    });
    const decision = reconcileOnce(cluster, c, at(0));
    expect(decision.kind).toBe('owner_transfer_blocked');
    expect(executed(decision)).toEqual([]);
    const [name] = createdPlans(decision);
    expect(cluster.plan(name!).status?.phase).toBe('Pending');
    expect(condition(decision, 'OwnerTransferBlocked')).toMatchObject({ status: 'True' });
    expect(condition(decision, 'Ready')).toMatchObject({ status: 'False', reason: 'OwnerTransferBlocked' });
    expect(decision.status.plan_warnings).toEqual([
      'adopt mode transfers ownership of schema inventory to app',
    ]);
  });

  it('owner transfers in observe mode only warn', () => {
    const cluster = new FakeCluster(
      policy({ mode: 'observe', approval: 'manual', reconciliation_mode: 'adopt' }),
    );
    const decision = reconcileOnce(
      cluster,
      computed('A', 1, { ownerTransferBlocked: true, warnings: ['w'] }),
      at(0),
    );
    expect(condition(decision, 'OwnerTransferBlocked')).toBeUndefined();
    expect(decision.status.plan_warnings).toEqual(['w']);
  });

  it('writes managed identity, owned roles/schemas, content digest and change summary on success', () => {
    const decision = reconcileOnce(new FakeCluster(policy()), computed('A', 2), at(0));
    expect(decision.status).toMatchObject({
      managed_database_identity: 'team-a/db-credentials/DATABASE_URL',
      owned_roles: ['app'],
      owned_schemas: ['inventory'],
      content_digest: 'sha256:content',
      change_summary: { total: 2, grants_added: 2 },
    });
  });

  it('never holds more than 16 conditions', () => {
    const decision = reconcileOnce(
      new FakeCluster(policy({ approval: null, reconciliation_mode: 'additive' })),
      computed('A'),
      at(0),
    );
    expect(decision.status.conditions?.length).toBeLessThanOrEqual(16);
  });
});

describe('execution bookkeeping', () => {
  it('a plan Applying waits for the executor (no second request)', () => {
    const cluster = new FakeCluster(policy());
    const [name] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.patchPlan(name!, { phase: 'Applying', applyingSince: at(1) });
    const decision = reconcileOnce(cluster, computed('A'), at(2));
    expect(decision.kind).toBe('applying');
    expect(executed(decision)).toEqual([]);
  });

  it('a plan stuck Applying past the timeout is marked Failed and its effects are planned afresh', () => {
    const cluster = new FakeCluster(policy());
    const [name] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.patchPlan(name!, { phase: 'Applying', applyingSince: at(1) });
    const decision = reconcileOnce(cluster, computed('A'), at(1000));
    expect(cluster.plan(name!).status).toMatchObject({ phase: 'Failed', failedAt: at(1000) });
    expect(cluster.plan(name!).status?.lastError).toContain('execution interrupted');
    expect(createdPlans(decision)).toHaveLength(1);
  });

  it('a plan left Applying without applyingSince is still recovered after the timeout', () => {
    const cluster = new FakeCluster(policy());
    const [name] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.patchPlan(name!, { phase: 'Applying' });
    expect(reconcileOnce(cluster, computed('A'), at(60)).kind).toBe('applying');
    reconcileOnce(cluster, computed('A'), at(1000));
    expect(cluster.plan(name!).status?.phase).toBe('Failed');
  });

  it('a plan with the same effects that failed within 120 s is not re-planned (PlanRetryDeferred)', () => {
    const cluster = new FakeCluster(policy());
    const [name] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.patchPlan(name!, { phase: 'Failed', failedAt: at(10), lastError: 'permission denied' });
    const deferred = reconcileOnce(cluster, computed('A'), at(40));
    expect(deferred.kind).toBe('retry_deferred');
    expect(createdPlans(deferred)).toEqual([]);
    expect(deferred.requeueAfterSeconds).toBe(90);
    expect(createdPlans(reconcileOnce(cluster, computed('A'), at(200)))).toHaveLength(1);
  });

  it('a forced reconcile skips the retry window', () => {
    const cluster = new FakeCluster(policy());
    const [name] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.patchPlan(name!, { phase: 'Failed', failedAt: at(10) });
    cluster.annotate(RECONCILE_REQUESTED_AT_ANNOTATION, 'retry-now');
    expect(createdPlans(reconcileOnce(cluster, computed('A'), at(20)))).toHaveLength(1);
  });

  it('retention deletes the oldest terminal plans beyond the configured count', () => {
    const cluster = new FakeCluster(policy());
    for (let i = 0; i < 4; i += 1) {
      const [name] = createdPlans(reconcileOnce(cluster, computed(`P${i}`), at(i * 10)));
      cluster.patchPlan(name!, { phase: 'Applied', appliedAt: at(i * 10 + 1) });
    }
    const decision = decideReconcile({
      policy: cluster.policy,
      plans: cluster.planList(),
      conflict: { kind: 'clear' },
      outcome: { kind: 'computed', plan: computed('n', 0) },
      now: at(100),
      jitter: 0,
      settings: {
        retention: { applied: 2, decided: 1, superseded: 1, minAgeSeconds: 0 },
        failedRetryWindowSeconds: 120,
        stuckApplyingSeconds: 600,
      },
    });
    expect(decision.steps.filter((s) => s.kind === 'deletePlan')).toHaveLength(2);
  });

  it('plans of another policy (or a deleted-and-recreated one) are never touched', () => {
    const cluster = new FakeCluster(policy({ approval: 'manual' }));
    const [a] = createdPlans(reconcileOnce(cluster, computed('A'), at(0)));
    cluster.policy = {
      ...cluster.policy,
      metadata: { ...cluster.policy.metadata, uid: 'uid-recreated' },
      status: {},
    };
    const decision = reconcileOnce(cluster, computed('B'), at(1));
    expect(cluster.plan(a!).status?.phase).toBe('Pending');
    expect(createdPlans(decision)).toHaveLength(1);
  });
});
