// ADR 0026: while no admission policy authenticates decisions, every manual plan waiting for a person says so
// in its `Approved=False` reason (ApprovalUnauthenticated instead of PendingApproval): new plans at creation,
// plans already waiting at the next pass, and back once decisions are authenticated. Decided plans, auto
// plans and passes that do not know the state are left alone.
import { decideReconcile } from './decide.js';
import type { DecisionAuthentication } from './plan-builder.js';
import { FakeCluster, at, computed, policy } from './test-support/fixtures.js';
import { createdPlans } from './test-support/reconcile.js';

const UNAUTHENTICATED: DecisionAuthentication = { authenticated: false, detail: 'no binding' };
const AUTHENTICATED: DecisionAuthentication = { authenticated: true, detail: 'bound' };

function pass(cluster: FakeCluster, now: string, decisions?: DecisionAuthentication) {
  const decision = decideReconcile({
    policy: cluster.policy,
    plans: cluster.planList(),
    conflict: { kind: 'clear' },
    outcome: { kind: 'computed', plan: computed('A') },
    now,
    jitter: 0,
    ...(decisions ? { decisions } : {}),
  });
  cluster.apply(decision.steps, now);
  return decision;
}

const approvedCondition = (cluster: FakeCluster, name: string) =>
  cluster.plan(name).status?.conditions?.find((c) => c.type === 'Approved');

describe('the pending Approved condition says whether decisions are authenticated', () => {
  it('a manual plan is created with ApprovalUnauthenticated while decisions are unauthenticated', () => {
    const cluster = new FakeCluster(policy({ mode: 'apply', approval: 'manual' }));
    const [name] = createdPlans(pass(cluster, at(0), UNAUTHENTICATED));
    expect(approvedCondition(cluster, name!)).toMatchObject({
      status: 'False',
      reason: 'ApprovalUnauthenticated',
      message: expect.stringMatching(/decisions are unauthenticated/),
    });
  });

  it('a waiting plan is re-stamped when the state flips, and only then', () => {
    const cluster = new FakeCluster(policy({ mode: 'apply', approval: 'manual' }));
    const [name] = createdPlans(pass(cluster, at(0), AUTHENTICATED));
    expect(approvedCondition(cluster, name!)?.reason).toBe('PendingApproval');

    const flipped = pass(cluster, at(10), UNAUTHENTICATED);
    expect(flipped.steps.filter((s) => s.kind === 'patchPlanStatus').map((s) => s.purpose.kind)).toEqual([
      'approvalAuthentication',
    ]);
    expect(approvedCondition(cluster, name!)?.reason).toBe('ApprovalUnauthenticated');
    // The other conditions stay as they were.
    expect(cluster.plan(name!).status?.conditions?.map((c) => c.type)).toEqual(['Computed', 'Approved']);

    const again = pass(cluster, at(20), UNAUTHENTICATED);
    expect(again.steps.filter((s) => s.kind === 'patchPlanStatus')).toEqual([]);

    pass(cluster, at(30), AUTHENTICATED);
    expect(approvedCondition(cluster, name!)?.reason).toBe('PendingApproval');
  });

  it('leaves a decided plan, an auto plan and a pass that does not know the state alone', () => {
    const manual = new FakeCluster(policy({ mode: 'apply', approval: 'manual' }));
    const [name] = createdPlans(pass(manual, at(0), AUTHENTICATED));
    expect(pass(manual, at(5)).steps.filter((s) => s.kind === 'patchPlanStatus')).toEqual([]);
    manual.decide(name!, 'Approved', at(6));
    const decided = pass(manual, at(10), UNAUTHENTICATED);
    expect(
      decided.steps.filter(
        (s) => s.kind === 'patchPlanStatus' && s.purpose.kind === 'approvalAuthentication',
      ),
    ).toEqual([]);

    const auto = new FakeCluster(policy({ mode: 'apply', approval: 'auto' }));
    const [autoName] = createdPlans(pass(auto, at(0), UNAUTHENTICATED));
    expect(approvedCondition(auto, autoName!)).toMatchObject({ status: 'True', reason: 'AutoApproved' });
  });
});
