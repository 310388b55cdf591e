// A person's decision on a PostgresPolicyPlan or an EphemeralAccessRequest, as one status write: the check
// that the object can still be decided (naming the field and the rule) and the merge patch that records it.
// Pure: the caller passes the object it read, the decider it authenticated as, and `now`.
import type {
  AccessCondition,
  Condition,
  EphemeralAccessRequest,
  Identity,
  PostgresPolicyPlan,
} from './types.js';

/** The two decisions a person records. */
export type Decision = 'Approved' | 'Denied';

/** Who decides: the caller's authenticated identity (or, without an authentication API, an assertion). */
export type Decider = Identity;

/** `decidedBy` groups the CRD accepts (spec Limits: at most 64, each 1..256 characters). */
export const DECIDED_BY_MAX_GROUPS = 64;

/** A merge patch of a status subresource, guarded by the resourceVersion that was read. */
export interface StatusPatch<S> {
  readonly metadata: { readonly resourceVersion: string };
  readonly status: S;
}

/** Phases a request may still be denied in (Denied is a kill switch: it also revokes held access). */
const REQUEST_DENIABLE = new Set(['Pending', 'PendingApproval', 'Applying', 'Active']);

function trueDecision(
  conditions: readonly { readonly type: string; readonly status: string }[] | null | undefined,
): string | undefined {
  return (conditions ?? []).find((c) => (c.type === 'Approved' || c.type === 'Denied') && c.status === 'True')
    ?.type;
}

/** `decidedBy` as the CRD accepts it: username, uid when known, at most 64 non-empty groups. */
export function decidedBy(decider: Decider): Identity {
  const groups = (decider.groups ?? []).filter((g) => g.length > 0 && g.length <= 256);
  return {
    username: decider.username,
    ...(decider.uid ? { uid: decider.uid } : {}),
    groups: groups.slice(0, DECIDED_BY_MAX_GROUPS),
  };
}

/**
 * Why the plan cannot take a decision now, or null. Each message names the field and the rule.
 * @example planDecisionProblem(appliedPlan, 'Approved') // 'status.phase is Applied: only a Pending plan ...'
 */
export function planDecisionProblem(plan: PostgresPolicyPlan, decision: Decision): string | null {
  const status = plan.status ?? {};
  const recorded = trueDecision(status.conditions);
  if (recorded !== undefined) {
    const by = status.decidedBy?.username;
    return `status.conditions: the plan is already ${recorded}${by ? ` (decidedBy ${by})` : ''}; plan decisions are terminal`;
  }
  if (status.decidedBy) {
    return `status.decidedBy is already recorded (${status.decidedBy.username}); decision identity is write-once`;
  }
  const phase = status.phase ?? 'Pending';
  if (phase !== 'Pending') {
    return `status.phase is ${phase}: only a Pending plan can be ${decision.toLowerCase()}`;
  }
  if (decision === 'Approved' && !status.changeDigest) {
    return 'status.changeDigest is not set: an approval binds to the change digest, and this plan has none yet';
  }
  return null;
}

/**
 * The merge patch that records a plan decision: every condition the planner wrote stays, the decision
 * replaces the condition of its type (the planner's `Approved=False/PendingApproval`), and `decidedBy`
 * is written in the same update; `metadata.resourceVersion` makes a concurrent write a 409.
 */
export function planDecisionPatch(
  plan: PostgresPolicyPlan,
  decision: Decision,
  decider: Decider,
  now: string,
  message?: string,
): StatusPatch<{ conditions: Condition[]; decidedBy: Identity }> {
  const conditions = (plan.status?.conditions ?? []).filter((c) => c.type !== decision);
  const entry: Condition = {
    type: decision,
    status: 'True',
    reason: decision === 'Approved' ? 'ApprovedByUser' : 'DeniedByUser',
    message: message ?? `${decision.toLowerCase()} by ${decider.username}`,
    last_transition_time: now,
  };
  return {
    metadata: { resourceVersion: plan.metadata.resourceVersion ?? '' },
    status: { conditions: [...conditions, entry], decidedBy: decidedBy(decider) },
  };
}

/** Why the request cannot take the decision now, or null. Each message names the field and the rule. */
export function requestDecisionProblem(
  request: EphemeralAccessRequest,
  decision: Decision,
  now: Date,
): string | null {
  const status = request.status ?? {};
  const recorded = trueDecision(status.conditions);
  if (recorded !== undefined) {
    const by = status.decidedBy?.username;
    const end =
      recorded === 'Approved' && decision === 'Denied'
        ? '; to end the access now, delete the request (its revocation runs before it goes)'
        : '';
    return `status.conditions: the request is already ${recorded}${by ? ` (decidedBy ${by})` : ''}; approval decisions are terminal${end}`;
  }
  if (status.decidedBy) {
    return `status.decidedBy is already recorded (${status.decidedBy.username}); decision identity is write-once`;
  }
  const phase = status.phase ?? 'Pending';
  if (decision === 'Denied') {
    return REQUEST_DENIABLE.has(phase) ? null : `status.phase is ${phase}: the request has ended`;
  }
  if (phase === 'Pending' || !status.resolvedAccess) {
    return `status.resolvedAccess is not recorded yet (phase ${phase}): an approval binds to the resolved bundle; wait for PendingApproval`;
  }
  if (phase !== 'PendingApproval') {
    return `status.phase is ${phase}: only a PendingApproval request can be approved`;
  }
  const deadline = status.approvalExpiresAt ? Date.parse(status.approvalExpiresAt) : Number.NaN;
  if (!Number.isNaN(deadline) && deadline <= now.getTime()) {
    return `status.approvalExpiresAt ${status.approvalExpiresAt} has passed: the approval window expired, a late approval loses (ApprovalExpired)`;
  }
  return null;
}

/**
 * The merge patch that records a request decision, bound to the request's own
 * `resolvedAccess.bundleHash` and `grantedDuration` (never a value typed by hand). The whole conditions
 * array is sent, the scheduler's conditions unchanged, with the resourceVersion that was read.
 */
export function requestDecisionPatch(
  request: EphemeralAccessRequest,
  decision: Decision,
  decider: Decider,
  now: string,
  message?: string,
): StatusPatch<{ conditions: AccessCondition[]; decidedBy: Identity }> {
  const resolved = request.status?.resolvedAccess;
  if (decision === 'Approved' && !resolved) {
    throw new Error('an approval needs status.resolvedAccess (check requestDecisionProblem first)');
  }
  const conditions = (request.status?.conditions ?? []).filter((c) => c.type !== decision);
  const entry: AccessCondition = {
    type: decision,
    status: 'True',
    reason: decision,
    message: (message ?? `${decision.toLowerCase()} by ${decider.username}`).slice(0, 2048),
    lastTransitionTime: now,
    ...(resolved ? { bundleHash: resolved.bundleHash, grantedDuration: resolved.grantedDuration } : {}),
  };
  return {
    metadata: { resourceVersion: request.metadata.resourceVersion ?? '' },
    status: { conditions: [...conditions, entry], decidedBy: decidedBy(decider) },
  };
}
