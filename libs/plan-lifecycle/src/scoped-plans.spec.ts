// Scoped plans (spec.scope: ephemeral access Activate/Revoke) live in their request's lifecycle: the policy's
// decision table never waits for, supersedes, retains, deletes or points current_plan_ref at one, even a
// scoped plan carrying the policy's own controller ownerReference.
import { buildPlan } from './plan-builder.js';
import type { PostgresPolicyPlan } from './resources.js';
import { FakeCluster, at, computed, policy } from './test-support/fixtures.js';
import { createdPlans, executed, reconcileOnce } from './test-support/reconcile.js';

function scopedPlan(cluster: FakeCluster, name: string, phase: 'Applying' | 'Applied'): PostgresPolicyPlan {
  const { plan } = buildPlan({
    policy: cluster.policy,
    computed: computed('S'),
    existingPlanNames: [],
    now: at(0),
    autoApprove: false,
  });
  return {
    ...plan,
    metadata: { ...plan.metadata, name, uid: `${name}-uid`, creationTimestamp: at(0) },
    spec: {
      ...plan.spec,
      origin: { kind: 'EphemeralAccessRequest', name: 'req', uid: 'req-uid' },
      scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: 'sha256:b' },
    },
    status: {
      ...plan.status,
      phase,
      ...(phase === 'Applied' ? { appliedAt: at(1) } : { applyingSince: at(1) }),
    },
  };
}

describe('scoped plans are ignored by the policy plan lifecycle', () => {
  it('an Applying scoped plan does not hold the policy: its durable plan is created and executed', () => {
    const cluster = new FakeCluster(policy({ mode: 'apply', approval: 'auto' }));
    cluster.plans.set('req-activate', scopedPlan(cluster, 'req-activate', 'Applying'));
    const decision = reconcileOnce(cluster, computed('A'), at(10));
    expect(decision.kind).toBe('execution_requested');
    expect(createdPlans(decision)).toHaveLength(1);
    expect(executed(decision)).toEqual(createdPlans(decision));
    expect(decision.status.current_plan_ref?.name).toBe(createdPlans(decision)[0]);
    expect(cluster.plan('req-activate').status?.phase).toBe('Applying');
  });

  it('a converged policy neither supersedes nor deletes scoped plans, and never points current_plan_ref at one', () => {
    const cluster = new FakeCluster(policy({ mode: 'apply', approval: 'auto' }));
    for (let i = 0; i < 40; i += 1) cluster.plans.set(`req-${i}`, scopedPlan(cluster, `req-${i}`, 'Applied'));
    const decision = reconcileOnce(cluster, computed('A', 0), at(100_000));
    expect(decision.kind).toBe('reconciled');
    expect(decision.steps.filter((s) => s.kind === 'deletePlan' || s.kind === 'patchPlanStatus')).toEqual([]);
    expect(decision.status.current_plan_ref ?? null).toBeNull();
    expect(cluster.planList()).toHaveLength(40);
  });
});
