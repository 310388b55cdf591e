// The Kubernetes Events a reconcile step announces about a plan (pure): computed (awaiting approval), approved, denied,
// superseded and failed-closed here; applied and failed from the executor's report (planExecutionEvent).
// `kubectl describe postgrespolicyplan <name>` lists them; the gateway writes and deduplicates them.
// A policy status write announces its own transitions on the policy (policyStatusEvents).
import type { EventRegarding, ExecuteResultV1, KubeEventBody } from '@rolepolicy/contracts';
import {
  API_VERSION,
  policyEventsOf,
  supersedeReason,
  type PolicyWriteCause,
  type PostgresPolicy,
  type PostgresPolicyStatus,
  type ReconcileStep,
} from '@rolepolicy/plan-lifecycle';

/** `source.component` of the planner's Events. */
export const PLANNER_COMPONENT = 'rolepolicy-planner';

/** One Event to record. */
export type PlanEvent = { readonly regarding: EventRegarding; readonly event: KubeEventBody };

function planRef(namespace: string, name: string, uid?: string): EventRegarding {
  return { apiVersion: API_VERSION, kind: 'PostgresPolicyPlan', namespace, name, ...(uid ? { uid } : {}) };
}

function event(type: KubeEventBody['type'], reason: string, action: string, message: string): KubeEventBody {
  return { type, reason, action, message, component: PLANNER_COMPONENT };
}

const AUTO_APPROVED = event('Normal', 'PlanApproved', 'Approve', 'approved automatically (approval: auto)');

/** The Events of one step of a decision about `policy` (none for steps that change nothing a person waits on). */
export function planEventsOf(step: ReconcileStep, policy: PostgresPolicy): readonly PlanEvent[] {
  const namespace = policy.metadata.namespace;
  if (step.kind === 'createPlan') {
    const status = step.plan.status;
    // A plan created approved (approval: auto) waits on nobody: its outcome (PlanApplied, PlanFailed or
    // PlanSuperseded) is the one Event a person reads about it, which spares the API two writes a plan.
    if (status?.phase === 'Approved') return [];
    const digest = status?.changeDigest ? `, digest ${status.changeDigest}` : '';
    const regarding = planRef(namespace, step.plan.metadata.name);
    return [
      {
        regarding,
        event: event(
          'Normal',
          'PlanComputed',
          'Plan',
          `computed for PostgresPolicy ${policy.metadata.name} generation ${policy.metadata.generation}${digest}; awaiting approval`,
        ),
      },
    ];
  }
  if (step.kind !== 'patchPlanStatus') return [];
  const regarding = planRef(namespace, step.patch.name);
  const purpose = step.purpose;
  switch (purpose.kind) {
    case 'autoApprove':
      return [{ regarding, event: AUTO_APPROVED }];
    case 'recordApprovedPhase':
      return [
        {
          regarding,
          event: event('Normal', 'PlanApproved', 'Approve', 'approval recorded; execution requested'),
        },
      ];
    case 'reject':
      return [
        {
          regarding,
          event: event('Normal', 'PlanDenied', 'Approve', 'denied; the plan will not be applied'),
        },
      ];
    case 'supersede': {
      const { reason, message } = supersedeReason(purpose.cause);
      return [{ regarding, event: event('Normal', 'PlanSuperseded', 'Supersede', `${reason}: ${message}`) }];
    }
    case 'failClosed':
      return [
        {
          regarding,
          event: event('Warning', 'PlanFailed', 'Apply', `${purpose.reason}: the plan was not executed`),
        },
      ];
    case 'interrupted':
      return [
        {
          regarding,
          event: event('Warning', 'PlanFailed', 'Apply', 'execution interrupted: no executor report in time'),
        },
      ];
    case 'revalidate':
    case 'approvalAuthentication':
      return [];
    default: {
      const unreachable: never = purpose;
      return unreachable;
    }
  }
}

/** The Event of an executor report: Applied or Failed (other phases announce nothing new). */
export function planExecutionEvent(result: ExecuteResultV1): PlanEvent | undefined {
  const regarding = planRef(result.plan.namespace, result.plan.name, result.plan.uid);
  const digest = result.executedDigest ?? result.approvedDigest;
  if (result.phase === 'Applied') {
    return {
      regarding,
      event: event(
        'Normal',
        'PlanApplied',
        'Apply',
        `applied ${result.statementCount} statements (digest ${digest})`,
      ),
    };
  }
  if (result.phase === 'Failed') {
    const detail = result.lastError?.message ?? result.message;
    return { regarding, event: event('Warning', 'PlanFailed', 'Apply', `${result.reason}: ${detail}`) };
  }
  return undefined;
}

/**
 * The Events of one policy status write (`policyEventsOf`: ConflictDetected, SecretFetchFailed, Recovered,
 * DriftDetected, ApprovalIgnored, ...) on the policy itself; `settled` is the last True/False Ready before it,
 * `cause` whether the write records a plan's Applied result (its PlanApplied says what Reconciled would).
 */
export function policyStatusEvents(
  policy: PostgresPolicy,
  after: PostgresPolicyStatus,
  settled: 'True' | 'False' | undefined,
  cause: PolicyWriteCause = 'pass',
): readonly PlanEvent[] {
  const regarding: EventRegarding = {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    namespace: policy.metadata.namespace,
    name: policy.metadata.name,
    ...(policy.metadata.uid ? { uid: policy.metadata.uid } : {}),
  };
  return policyEventsOf(policy.status, after, settled, cause).map((e) => ({
    regarding,
    event: event(e.type, e.reason, e.action, e.message),
  }));
}
