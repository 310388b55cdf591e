// Status patches for existing plans (merge-patch bodies for the /status subresource). A plan that carries
// a recorded decision gets phase/timestamp-only patches: resending its conditions from a possibly stale
// read could drop a decision written a moment ago.

import { AUTO_APPROVER, planDecision } from './approval.js';
import { withConditions } from './conditions.js';
import {
  AUTO_APPROVED_REASON,
  pendingApprovalCondition,
  type DecisionAuthentication,
} from './plan-builder.js';
import { redactSecrets } from './redact.js';
import type { PlanPhase, PostgresPolicyPlan, PostgresPolicyPlanStatus } from './resources.js';

/** Why a live plan stops being actionable; the reason is written on the plan's `Superseded` condition. */
export type SupersedeCause =
  | { readonly kind: 'EffectsChanged' }
  | { readonly kind: 'EffectsCleared' }
  | { readonly kind: 'ReplacedByNewerPlan'; readonly by: string }
  | { readonly kind: 'PolicyStoppedPlanning' }
  /** Candidate plans (apps/planner/src/candidates): the reason names the candidate lifecycle event. */
  | {
      readonly kind: 'Candidate';
      readonly reason:
        | 'SupersededByBaseChange'
        | 'SupersededByPromotion'
        | 'Replaced'
        | 'PlanDenied'
        | 'Expired'
        | 'Promoted';
      readonly message: string;
    }
  | {
      readonly kind: 'TargetIdentity';
      readonly reason:
        'TargetChanged' | 'TargetIdentityAppeared' | 'TargetIdentityUnavailable' | 'PhysicalIdentityRequired';
      readonly message: string;
    };

/** Condition reason and message for a supersede cause. */
export function supersedeReason(cause: SupersedeCause): {
  readonly reason: string;
  readonly message: string;
} {
  switch (cause.kind) {
    case 'EffectsChanged':
      return { reason: 'Superseded', message: 'the recomputed effects differ from this plan' };
    case 'EffectsCleared':
      return {
        reason: 'Superseded',
        message: 'the target already matches the policy; nothing left to apply',
      };
    case 'ReplacedByNewerPlan':
      return { reason: 'Superseded', message: `replaced by plan ${cause.by}` };
    case 'PolicyStoppedPlanning':
      return { reason: 'Superseded', message: 'the policy no longer plans these changes' };
    case 'TargetIdentity':
    case 'Candidate':
      return { reason: cause.reason, message: cause.message };
    default: {
      const unreachable: never = cause;
      return unreachable;
    }
  }
}

/** One patch to one plan's status. */
export interface PlanStatusPatch {
  readonly name: string;
  readonly status: PostgresPolicyPlanStatus;
}

/**
 * Marks a live plan Superseded with a `Superseded=True` condition saying why (the person who approved it
 * reads there why it never ran). Undecided plans also get `Approved=False` re-stamped with the cause. A
 * recorded decision is terminal and write-once at admission, so resending the conditions of a decided plan
 * keeps the decision they were read with.
 */
export function supersedePatch(
  plan: PostgresPolicyPlan,
  cause: SupersedeCause,
  now: string,
): PlanStatusPatch {
  const { reason, message } = supersedeReason(cause);
  const superseded = { Superseded: { status: 'True' as const, reason, message: redactSecrets(message) } };
  const changes =
    planDecision(plan) === 'undecided'
      ? { Approved: { status: 'False' as const, reason, message: redactSecrets(message) }, ...superseded }
      : superseded;
  const conditions = withConditions(plan.status?.conditions, changes, now);
  return { name: plan.metadata.name, status: { phase: 'Superseded', conditions } };
}

/** Confirms a pending plan against the policy's current generation (provenance, never approval identity). */
export function revalidatePatch(plan: PostgresPolicyPlan, generation: number, now: string): PlanStatusPatch {
  return { name: plan.metadata.name, status: { revalidatedGeneration: generation, revalidatedAt: now } };
}

/** The planner's own approval under `approval: auto`, written with decidedBy in one update (admission rule 4). */
export function autoApprovePatch(plan: PostgresPolicyPlan, now: string): PlanStatusPatch {
  const conditions = withConditions(
    plan.status?.conditions,
    {
      Approved: {
        status: 'True',
        reason: AUTO_APPROVED_REASON,
        message: 'approved automatically (approval: auto)',
      },
    },
    now,
  );
  return { name: plan.metadata.name, status: { phase: 'Approved', conditions, decidedBy: AUTO_APPROVER } };
}

/**
 * The undecided `Approved` condition re-stamped for whether decisions are authenticated (ADR 0026), or null
 * when it already says so. Only for undecided plans: a decided plan's conditions are never resent.
 */
export function pendingApprovalPatch(
  plan: PostgresPolicyPlan,
  decisions: DecisionAuthentication,
  now: string,
): PlanStatusPatch | null {
  const desired = pendingApprovalCondition(decisions);
  const current = plan.status?.conditions?.find((c) => c.type === 'Approved');
  if (current?.status === 'False' && current.reason === desired.reason && current.message === desired.message)
    return null;
  const conditions = withConditions(plan.status?.conditions, { Approved: desired }, now);
  return { name: plan.metadata.name, status: { conditions } };
}

/** Phase-only patch, for plans whose decision a person recorded (Approved -> phase Approved, Denied -> Rejected). */
export function phasePatch(plan: PostgresPolicyPlan, phase: PlanPhase): PlanStatusPatch {
  return { name: plan.metadata.name, status: { phase } };
}

/** Written by the executor right before the transaction starts. */
export function applyingPatch(plan: PostgresPolicyPlan, now: string): PlanStatusPatch {
  return { name: plan.metadata.name, status: { phase: 'Applying', applyingSince: now } };
}

/**
 * Written by the executor after the transaction committed. Only approved plans execute, and a terminal
 * decision cannot change any more, so resending the conditions read under the lock cannot drop one.
 */
export function appliedPatch(plan: PostgresPolicyPlan, now: string): PlanStatusPatch {
  const conditions = withConditions(
    plan.status?.conditions,
    {
      Applied: { status: 'True', reason: 'Applied', message: 'all statements committed in one transaction' },
    },
    now,
  );
  return {
    name: plan.metadata.name,
    status: { phase: 'Applied', appliedAt: now, lastError: null, conditions },
  };
}

/** Written when execution failed or was refused (fail closed); the message is redacted here. */
export function failedPatch(
  plan: PostgresPolicyPlan,
  reason: string,
  message: string,
  now: string,
): PlanStatusPatch {
  const lastError = redactSecrets(message);
  const conditions = withConditions(
    plan.status?.conditions,
    { Applied: { status: 'False', reason, message: lastError } },
    now,
  );
  return { name: plan.metadata.name, status: { phase: 'Failed', failedAt: now, lastError, conditions } };
}
