// Which audit records a decision writes: an automatic approval at creation, a person's approval or denial
// with their identity, once per plan; nothing for steps that change no decision.
import {
  FakeCluster,
  at,
  computed,
  policy,
} from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { reconcileOnce } from '../../../../libs/plan-lifecycle/src/test-support/reconcile.js';
import { planAuditRecords } from './plan-audit.js';

function recordsOf(cluster: FakeCluster, label: string, seconds: number) {
  const decision = reconcileOnce(cluster, computed(label), at(seconds));
  return decision.steps.flatMap((step) =>
    planAuditRecords(step, cluster.policy, (name) => cluster.plans.get(name), at(seconds)),
  );
}

test('an auto policy: the created plan is recorded approved automatically by the planner', () => {
  const cluster = new FakeCluster(policy({ approval: 'auto' }));
  const records = recordsOf(cluster, 'A', 1);
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({
    event: 'plan.approved',
    source: 'planner',
    automatic: true,
    decidedBy: { username: 'system:rolepolicy-planner(auto-approval)' },
    object: { kind: 'PostgresPolicyPlan', namespace: 'team-a' },
    policy: { name: 'orders' },
  });
});

test('a manual policy: nothing while pending, then the approval with the person who decided', () => {
  const cluster = new FakeCluster(policy({ approval: 'manual' }));
  expect(recordsOf(cluster, 'A', 1)).toEqual([]);
  const [plan] = [...cluster.plans.keys()];
  cluster.decide(plan!, 'Approved', at(2));
  const records = recordsOf(cluster, 'A', 3);
  expect(records.map((r) => r.event)).toEqual(['plan.approved']);
  expect(records[0]).toMatchObject({
    automatic: false,
    decidedBy: { username: 'alice@example.com', groups: ['dba'] },
    reason: 'Reviewed',
  });
});

test('a denial is plan.denied; the same decision seen again has the same id', () => {
  const cluster = new FakeCluster(policy({ approval: 'manual' }));
  recordsOf(cluster, 'A', 1);
  const [plan] = [...cluster.plans.keys()];
  cluster.decide(plan!, 'Denied', at(2));
  const decision = reconcileOnce(cluster, computed('A'), at(3));
  const records = decision.steps.flatMap((s) =>
    planAuditRecords(s, cluster.policy, (n) => cluster.plans.get(n), at(3)),
  );
  expect(records.map((r) => r.event)).toEqual(['plan.denied']);
  const again = decision.steps.flatMap((s) =>
    planAuditRecords(s, cluster.policy, (n) => cluster.plans.get(n), at(9)),
  );
  expect(again[0]!.id).toBe(records[0]!.id);
});
