// The audit records of a reconcile step (docs/audit.md), beside its Events (plan-events.ts): a plan decision
// the planner records (approved by a person or under `approval: auto`, denied) and a plan it failed closed
// or found interrupted. Pure: the plan as the planner sees it and the clock are passed in.
import { planDecisionRecord, planFailedRecord, type AuditRecord } from '@rolepolicy/contracts';
import {
  AUTO_APPROVER,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type ReconcileStep,
} from '@rolepolicy/plan-lifecycle';

/** The records of `step` about `policy`; `plan(name)` is the plan as the planner's view holds it. */
export function planAuditRecords(
  step: ReconcileStep,
  policy: PostgresPolicy,
  plan: (name: string) => PostgresPolicyPlan | undefined,
  at: string,
): readonly AuditRecord[] {
  const policyRef = { name: policy.metadata.name, uid: policy.metadata.uid ?? null };
  if (step.kind === 'createPlan') {
    // A plan created approved (approval: auto) has no later approval step.
    if (step.plan.status?.phase !== 'Approved') return [];
    const created = {
      ...step.plan,
      metadata: {
        ...step.plan.metadata,
        namespace: step.plan.metadata.namespace ?? policy.metadata.namespace,
      },
    };
    return [
      planDecisionRecord({ event: 'plan.approved', at, plan: created, policy: policyRef, automatic: true }),
    ];
  }
  if (step.kind !== 'patchPlanStatus') return [];
  const current = plan(step.patch.name);
  if (current === undefined) return [];
  // The plan with the status this step writes (conditions and decidedBy of an auto approval are in it).
  const seen = { ...current, status: { ...current.status, ...step.patch.status } };
  const automatic = seen.status.decidedBy?.username === AUTO_APPROVER.username;
  const purpose = step.purpose;
  switch (purpose.kind) {
    case 'autoApprove':
    case 'recordApprovedPhase':
      return [planDecisionRecord({ event: 'plan.approved', at, plan: seen, policy: policyRef, automatic })];
    case 'reject':
      return [planDecisionRecord({ event: 'plan.denied', at, plan: seen, policy: policyRef, automatic })];
    case 'failClosed':
    case 'interrupted':
      return [
        planFailedRecord({
          at,
          source: 'planner',
          plan: {
            namespace: policy.metadata.namespace,
            name: current.metadata.name,
            uid: current.metadata.uid,
          },
          policy: policyRef,
          digest: current.status?.changeDigest ?? null,
          key: current.metadata.uid ?? `${policy.metadata.namespace}/${current.metadata.name}`,
          reason: purpose.kind === 'failClosed' ? purpose.reason : 'ExecutionInterrupted',
        }),
      ];
    case 'supersede':
    case 'revalidate':
    case 'approvalAuthentication':
      return [];
    default: {
      const unreachable: never = purpose;
      return unreachable;
    }
  }
}

/**
 * The records of every step of a decision, once its commands are stored: `plans` as the view held them
 * before the steps, with each step's own status on top.
 */
export function decisionAuditRecords(
  steps: readonly ReconcileStep[],
  policy: PostgresPolicy,
  plans: readonly PostgresPolicyPlan[],
  at: string,
): readonly AuditRecord[] {
  const plan = (name: string) => plans.find((p) => p.metadata.name === name);
  return steps.flatMap((step) => planAuditRecords(step, policy, plan, at));
}
