// Which Kubernetes Events a decision announces: a plan computed awaiting approval (an auto-approved one
// announces only its outcome), a person's approval or denial recorded, a plan superseded, and the executor's
// Applied/Failed report; messages carry no secret.
import type { ExecuteResultV1 } from '@rolepolicy/contracts';
import {
  FakeCluster,
  at,
  computed,
  policy,
} from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { reconcileOnce } from '../../../../libs/plan-lifecycle/src/test-support/reconcile.js';
import { planEventsOf, planExecutionEvent, policyStatusEvents } from './plan-events.js';

function eventsOf(cluster: FakeCluster, label: string, seconds: number) {
  const decision = reconcileOnce(cluster, computed(label), at(seconds));
  return decision.steps.flatMap((step) => planEventsOf(step, cluster.policy));
}

test('a manual policy: PlanComputed awaiting approval, then PlanApproved once a person approved', () => {
  const cluster = new FakeCluster(policy({ approval: 'manual' }));
  const [computedEvent, ...rest] = eventsOf(cluster, 'A', 1);
  expect(rest).toEqual([]);
  expect(computedEvent!.regarding).toMatchObject({ kind: 'PostgresPolicyPlan', namespace: 'team-a' });
  expect(computedEvent!.event).toMatchObject({
    type: 'Normal',
    reason: 'PlanComputed',
    action: 'Plan',
    component: 'rolepolicy-planner',
  });
  expect(computedEvent!.event.message).toMatch(
    /^computed for PostgresPolicy orders generation 1, digest \S+; awaiting approval$/,
  );

  cluster.decide(computedEvent!.regarding.name, 'Approved', at(2));
  const reasons = eventsOf(cluster, 'A', 3).map((e) => e.event.reason);
  expect(reasons).toEqual(['PlanApproved']);
});

test('a denied plan announces PlanDenied; a changed policy supersedes the pending plan', () => {
  const denied = new FakeCluster(policy({ approval: 'manual' }));
  const [first] = eventsOf(denied, 'A', 1);
  denied.decide(first!.regarding.name, 'Denied', at(2));
  expect(eventsOf(denied, 'A', 3).map((e) => e.event.reason)).toEqual(['PlanDenied']);

  const changed = new FakeCluster(policy({ approval: 'manual' }));
  eventsOf(changed, 'A', 1);
  const events = eventsOf(changed, 'B', 2);
  expect(events.map((e) => e.event.reason).sort()).toEqual(['PlanComputed', 'PlanSuperseded']);
  expect(events.find((e) => e.event.reason === 'PlanSuperseded')!.event.message).toMatch(/^Superseded: /);
});

test('an auto policy: the created plan announces nothing, its outcome will (one Event per outcome)', () => {
  const cluster = new FakeCluster(policy({ approval: 'auto' }));
  expect(eventsOf(cluster, 'A', 1)).toEqual([]);
});

test('the executor report: Applied is Normal PlanApplied, Failed is Warning PlanFailed with the reason', () => {
  const base = {
    v: 1 as const,
    plan: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicyPlan',
      namespace: 'team-a',
      name: 'orders-1',
      uid: 'u1',
    },
    idempotencyKey: 'k',
    approvedDigest: 'sha256:aaa',
    recomputedDigest: 'sha256:aaa',
    statementCount: 3,
  };
  const applied = planExecutionEvent({
    ...base,
    phase: 'Applied',
    reason: 'Executed',
    message: 'ok',
    executedDigest: 'sha256:aaa',
  } as ExecuteResultV1);
  expect(applied).toMatchObject({
    regarding: { name: 'orders-1', uid: 'u1' },
    event: { type: 'Normal', reason: 'PlanApplied', message: 'applied 3 statements (digest sha256:aaa)' },
  });
  const failed = planExecutionEvent({
    ...base,
    phase: 'Failed',
    reason: 'DatabaseError',
    message: 'permission denied',
    executedDigest: null,
  } as ExecuteResultV1);
  expect(failed?.event).toMatchObject({
    type: 'Warning',
    reason: 'PlanFailed',
    message: 'DatabaseError: permission denied',
  });
  expect(
    planExecutionEvent({
      ...base,
      phase: 'Skipped',
      reason: 'NotApproved',
      message: '',
      executedDigest: null,
    } as ExecuteResultV1),
  ).toBeUndefined();
});

describe('policyStatusEvents', () => {
  it('announces a status transition on the policy itself, from the planner', () => {
    const failing = policy(
      {},
      {},
      {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'DatabaseConnectionFailed', message: 'refused' },
        ],
      },
    );
    const events = policyStatusEvents(
      failing,
      { conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: 'applied' }] },
      'False',
    );
    expect(events).toEqual([
      {
        regarding: {
          apiVersion: 'rolepolicy.io/v1alpha1',
          kind: 'PostgresPolicy',
          namespace: failing.metadata.namespace,
          name: failing.metadata.name,
          uid: failing.metadata.uid,
        },
        event: {
          type: 'Normal',
          reason: 'Recovered',
          action: 'Reconcile',
          message: 'applied',
          component: 'rolepolicy-planner',
        },
      },
    ]);
  });
});
