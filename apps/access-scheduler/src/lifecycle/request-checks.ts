// The checks the request phases share: the snapshot's approval mode, what changed since resolution, whether
// an approval attests the snapshot, and the state of a scoped plan with the actions that drive it. Pure.
import type { EphemeralAccessRequest, PostgresPolicyPlan, ResolvedAccess } from '@rolepolicy/kube';
import type { ScopeOperation } from '@rolepolicy/policy';
import { trueCondition } from './conditions.js';
import type { RequestAction, RequestPhase } from './request-types.js';
import type { Resolution } from './resolution.js';
import { foreignPlan } from './scoped-plan.js';

export function snapshotMode(request: EphemeralAccessRequest, phase: RequestPhase): 'Automatic' | 'Required' {
  const conditions = request.status?.conditions;
  const decided = trueCondition(conditions, 'Approved') ?? trueCondition(conditions, 'Denied');
  return phase === 'PendingApproval' || decided !== undefined ? 'Required' : 'Automatic';
}

/** Why the recorded snapshot no longer matches a fresh resolution, or null. */
export function changedSince(
  recorded: ResolvedAccess,
  mode: 'Automatic' | 'Required',
  fresh: Resolution,
): string | null {
  const now = fresh.resolvedAccess;
  if (now.accessPolicyUid !== recorded.accessPolicyUid) return 'the EphemeralAccessPolicy was replaced';
  if (now.targetPolicyUid !== recorded.targetPolicyUid) return 'the target PostgresPolicy was replaced';
  if (now.bundleHash !== recorded.bundleHash) return 'the membership bundle or the target database changed';
  if (now.grantedDuration !== recorded.grantedDuration) {
    return `the granted duration changed from ${recorded.grantedDuration} to ${now.grantedDuration}`;
  }
  if (fresh.approvalMode !== mode) return `the approval mode changed to ${fresh.approvalMode}`;
  return null;
}

/** Whether an Approved decision attests this snapshot, or why not. */
export function approvalProblem(
  request: EphemeralAccessRequest,
  resolved: ResolvedAccess,
): string | null | 'none' {
  const approved = trueCondition(request.status?.conditions, 'Approved');
  if (approved === undefined) return 'none';
  if (approved.bundleHash !== resolved.bundleHash) {
    return `the Approved condition's bundleHash ${approved.bundleHash ?? '(none)'} is not resolvedAccess.bundleHash ${resolved.bundleHash}`;
  }
  if (approved.grantedDuration !== resolved.grantedDuration) {
    return `the Approved condition's grantedDuration ${approved.grantedDuration ?? '(none)'} is not resolvedAccess.grantedDuration ${resolved.grantedDuration}`;
  }
  return null;
}

/** The state of one scoped plan as the machine needs it. */
export type PlanState = 'absent' | 'foreign' | 'Applying' | 'Applied' | 'Failed' | 'other';

export function planState(
  plan: PostgresPolicyPlan | undefined,
  request: EphemeralAccessRequest,
  operation: ScopeOperation,
  bundleHash: string,
): PlanState {
  if (plan === undefined) return 'absent';
  if (foreignPlan(plan, request, operation, bundleHash) !== null) return 'foreign';
  const phase = plan.status?.phase;
  return phase === 'Applying' || phase === 'Applied' || phase === 'Failed' ? phase : 'other';
}

/** Actions that drive one scoped plan towards Applied (create it, re-arm it, or ask for it). */
export function drive(state: PlanState, operation: ScopeOperation): RequestAction[] {
  if (state === 'absent' || state === 'Failed' || state === 'other')
    return [{ kind: 'createPlan', operation }];
  if (state === 'Applying') return [{ kind: 'sendScoped', operation }];
  return [];
}

export function planError(plan: PostgresPolicyPlan | undefined): string {
  return plan?.status?.lastError ?? 'the scoped plan failed';
}
