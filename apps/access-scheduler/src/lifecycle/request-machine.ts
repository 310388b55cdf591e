// The EphemeralAccessRequest state machine (operator notes 4.2, 4.3, 4.7) as one pure decision: from the
// request, its resolution now, its scoped plans and the clock to a status, actions and the next deadline.
// Level-triggered: nothing depends on having seen an earlier pass; every pass re-derives our conditions.
import type {
  AccessCondition,
  EphemeralAccessRequest,
  EphemeralAccessRequestStatus,
  PostgresPolicyPlan,
  ResolvedAccess,
} from '@rolepolicy/kube';
import { verifyResolvedAccess, type ScopeOperation } from '@rolepolicy/policy';
import { decisionConditions, stampCondition, trueCondition, type ConditionInput } from './conditions.js';
import type { Resolution, Unresolved } from './resolution.js';
import { errorText, foreignPlan } from './scoped-plan.js';
import type { TargetView } from './target.js';
import { sameJson } from './same.js';
import { instant, timestamp } from './time.js';

/** Finalizer that makes deletion of a holding request revoke first. */
export const REQUEST_FINALIZER = 'rolepolicy.io/ephemeral-access';

/** Request phases (spec). */
export type RequestPhase = NonNullable<EphemeralAccessRequestStatus['phase']>;

/** Phases after which nothing happens any more. */
export const TERMINAL_PHASES: readonly RequestPhase[] = [
  'Ended',
  'Revoked',
  'Cancelled',
  'Denied',
  'ApprovalExpired',
  'Failed',
];

/** What a pass reads. */
export interface RequestInput {
  readonly request: EphemeralAccessRequest;
  /** The request resolved against the current access policy and target (null when not needed). */
  readonly resolution: Resolution | Unresolved | null;
  readonly target: TargetView | null;
  readonly activationPlan: PostgresPolicyPlan | undefined;
  readonly revokePlan: PostgresPolicyPlan | undefined;
  readonly now: number;
}

/** A side effect of a pass, in order. */
export type RequestAction =
  | { readonly kind: 'addFinalizer' }
  | { readonly kind: 'removeFinalizer' }
  /** Create (or re-arm a Failed) scoped plan in phase Applying. */
  | { readonly kind: 'createPlan'; readonly operation: ScopeOperation }
  /** Ask the executor to run the plan (it exists in phase Applying). */
  | { readonly kind: 'sendScoped'; readonly operation: ScopeOperation };

/** A phase change, for the audit trail. `Revoked` is logged for a deleted request, never persisted. */
export interface Transition {
  readonly from: RequestPhase;
  readonly to: RequestPhase;
  readonly reason: string;
  readonly message: string;
}

/** The decision of one pass. */
export interface RequestDecision {
  /** The whole status to write, or null when it is already right. */
  readonly status: EphemeralAccessRequestStatus | null;
  readonly actions: readonly RequestAction[];
  readonly transition: Transition | null;
  /** The next deadline this request has (approval or access expiry), as ms. */
  readonly deadline: { readonly kind: 'approval' | 'expiry'; readonly at: number } | null;
  /** The pass waits on something else (a plan to appear, a result): look again after a short delay. */
  readonly waiting: boolean;
}

type Step = {
  phase: RequestPhase;
  reason: string;
  message: string;
  ready?: ConditionInput;
  applied?: ConditionInput | null;
  error?: string | null;
  actions: RequestAction[];
  waiting?: boolean;
  patch?: Partial<EphemeralAccessRequestStatus>;
};

const isTerminal = (phase: RequestPhase): boolean => TERMINAL_PHASES.includes(phase);

function snapshotMode(request: EphemeralAccessRequest, phase: RequestPhase): 'Automatic' | 'Required' {
  const conditions = request.status?.conditions;
  const decided = trueCondition(conditions, 'Approved') ?? trueCondition(conditions, 'Denied');
  return phase === 'PendingApproval' || decided !== undefined ? 'Required' : 'Automatic';
}

/** Why the recorded snapshot no longer matches a fresh resolution, or null. */
function changedSince(
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
function approvalProblem(request: EphemeralAccessRequest, resolved: ResolvedAccess): string | null | 'none' {
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
type PlanState = 'absent' | 'foreign' | 'Applying' | 'Applied' | 'Failed' | 'other';

function planState(
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
function drive(state: PlanState, operation: ScopeOperation): RequestAction[] {
  if (state === 'absent' || state === 'Failed' || state === 'other')
    return [{ kind: 'createPlan', operation }];
  if (state === 'Applying') return [{ kind: 'sendScoped', operation }];
  return [];
}

function planError(plan: PostgresPolicyPlan | undefined): string {
  return plan?.status?.lastError ?? 'the scoped plan failed';
}

/** Decides one pass for a request. */
export function decideRequest(input: RequestInput): RequestDecision {
  const { request } = input;
  const status = request.status ?? {};
  const phase: RequestPhase = status.phase ?? 'Pending';
  const deleting = request.metadata.deletionTimestamp !== undefined;
  const hasFinalizer = (request.metadata.finalizers ?? []).includes(REQUEST_FINALIZER);
  const none: RequestDecision = {
    status: null,
    actions: [],
    transition: null,
    deadline: null,
    waiting: false,
  };

  if (isTerminal(phase)) {
    return deleting && hasFinalizer ? { ...none, actions: [{ kind: 'removeFinalizer' }] } : none;
  }
  const resolved = status.resolvedAccess ?? null;
  const verified = resolved === null ? null : verifyResolvedAccess(resolved);
  if (deleting) return hasFinalizer ? decideDeletion(input, phase, resolved, verified?.ok === true) : none;

  const finalizer: RequestAction[] = hasFinalizer ? [] : [{ kind: 'addFinalizer' }];
  const step = decideLive(input, phase, resolved, verified, hasFinalizer);
  return finish(input, phase, step, finalizer);
}

/** Deletion of a request: revoke what it holds, then release the finalizer (notes 4.3 step 7). */
function decideDeletion(
  input: RequestInput,
  phase: RequestPhase,
  resolved: ResolvedAccess | null,
  verified: boolean,
): RequestDecision {
  const { request } = input;
  const base: RequestDecision = {
    status: null,
    actions: [],
    transition: null,
    deadline: null,
    waiting: false,
  };
  const holding = phase === 'Applying' || phase === 'Active' || phase === 'Revoking';
  const released = (message: string): RequestDecision => ({
    ...base,
    actions: [{ kind: 'removeFinalizer' }],
    transition: holding ? { from: phase, to: 'Revoked', reason: 'RequestDeleted', message } : null,
  });
  if (!holding || resolved === null || !verified) {
    return released(
      holding ? 'deleted without a verifiable snapshot: no revocation was possible' : 'deleted',
    );
  }
  const activation = planState(input.activationPlan, request, 'Activate', resolved.bundleHash);
  if (activation === 'Applying') {
    // The activation may be running: revoke only after it reports, or the grant could land after the revoke.
    return { ...base, actions: [{ kind: 'sendScoped', operation: 'Activate' }], waiting: true };
  }
  if (activation !== 'Applied') return released('deleted before any membership was granted');
  const revoke = planState(input.revokePlan, request, 'Revoke', resolved.bundleHash);
  if (revoke === 'Applied') return released('deleted: memberships revoked');
  if (revoke === 'foreign') return released('deleted: the revoke plan name is taken by another object');
  return { ...base, actions: drive(revoke, 'Revoke'), waiting: true };
}

function decideLive(
  input: RequestInput,
  phase: RequestPhase,
  resolved: ResolvedAccess | null,
  verified: { ok: boolean; message?: string } | null,
  hasFinalizer: boolean,
): Step {
  const { request, resolution, now } = input;
  if (resolved !== null && verified !== null && !verified.ok) {
    return invalidState(phase, `status.resolvedAccess does not verify: ${verified.message ?? ''}`);
  }
  const denied = trueCondition(request.status?.conditions, 'Denied');
  if (resolved === null) {
    if (denied !== undefined)
      return { phase: 'Denied', reason: 'Denied', message: denied.message ?? 'denied', actions: [] };
    return decidePending(input, phase);
  }
  const activation = planState(input.activationPlan, request, 'Activate', resolved.bundleHash);
  const revoke = planState(input.revokePlan, request, 'Revoke', resolved.bundleHash);
  if (activation === 'foreign' || revoke === 'foreign') {
    const plan = activation === 'foreign' ? input.activationPlan! : input.revokePlan!;
    return invalidState(
      phase,
      foreignPlan(plan, request, activation === 'foreign' ? 'Activate' : 'Revoke', resolved.bundleHash)!,
    );
  }
  const expiresAt = instant(request.status?.expiresAt);
  const approvalExpiresAt = instant(request.status?.approvalExpiresAt);

  // 1. Denied is a kill switch, also for Automatic requests.
  if (denied !== undefined) {
    const why = `denied${denied.message ? `: ${denied.message}` : ''}`;
    if (phase === 'Pending' || phase === 'PendingApproval')
      return { phase: 'Denied', reason: 'Denied', message: why, actions: [] };
    return stopHolding(phase, activation, revoke, { phase: 'Denied', reason: 'Denied', message: why }, input);
  }
  switch (phase) {
    case 'Pending':
      // Recorded snapshot but phase lost (e.g. a status write replaced it): resume from the snapshot's mode.
      return {
        phase: 'PendingApproval',
        reason: 'Resolved',
        message: 'resumed from the recorded snapshot',
        actions: [],
      };
    case 'PendingApproval': {
      const fresh = resolution;
      if (fresh?.ok === true) {
        const changed = changedSince(resolved, 'Required', fresh);
        if (changed !== null)
          return { phase: 'Cancelled', reason: 'AccessPolicyChanged', message: changed, actions: [] };
      }
      if (approvalExpiresAt !== undefined && now >= approvalExpiresAt) {
        return {
          phase: 'ApprovalExpired',
          reason: 'ApprovalExpired',
          message: `no approval before ${request.status?.approvalExpiresAt}`,
          actions: [],
        };
      }
      if (fresh?.ok === false && fresh.reason === 'Suspended') {
        return { phase, reason: 'PendingApproval', message: `waiting: ${fresh.message}`, actions: [] };
      }
      if (fresh?.ok === false) return invalidState(phase, fresh.message);
      const problem = approvalProblem(request, resolved);
      if (problem === 'none')
        return { phase, reason: 'PendingApproval', message: 'waiting for an approval decision', actions: [] };
      if (problem !== null) return invalidState(phase, `approval refused: ${problem}`);
      const granted = Number(resolved.grantedDuration.replace(/s$/, ''));
      return {
        phase: 'Applying',
        reason: 'ApprovedBundleApplying',
        message: `approved for ${resolved.grantedDuration}`,
        actions: [],
        patch: { activatedAt: timestamp(now), expiresAt: timestamp(now + granted * 1000) },
      };
    }
    case 'Applying':
      return decideApplying(input, resolved, activation, revoke, expiresAt, hasFinalizer);
    case 'Active':
      if (expiresAt === undefined || now >= expiresAt) {
        return {
          phase: 'Revoking',
          reason: 'AccessExpired',
          message: `access expired at ${request.status?.expiresAt ?? '(unset)'}`,
          actions: drive(revoke, 'Revoke'),
          applied: grantedCondition(),
        };
      }
      return {
        phase,
        reason: 'Active',
        message: `granted until ${request.status?.expiresAt}`,
        actions: [],
        applied: grantedCondition(),
      };
    case 'Revoking':
      return finishRevoking(phase, revoke, input, {
        phase: 'Ended',
        reason: 'MembershipsRevoked',
        message: 'access expired; memberships revoked',
      });
    default:
      return { phase, reason: phase, message: '', actions: [] };
  }
}

function grantedCondition(): ConditionInput {
  return { type: 'Applied', status: 'True', reason: 'MembershipsGranted' };
}

function invalidState(phase: RequestPhase, message: string): Step {
  return {
    phase,
    reason: phase,
    message,
    ready: { type: 'Ready', status: 'False', reason: 'InvalidRequestState', message },
    error: message,
    actions: [],
  };
}

/** Pending without a snapshot: resolve it (notes 4.2). */
function decidePending(input: RequestInput, phase: RequestPhase): Step {
  const { resolution, now } = input;
  if (resolution === null || !resolution.ok) {
    const message = resolution?.message ?? 'not resolved yet';
    const reason = resolution?.reason ?? 'InvalidRequest';
    return {
      phase,
      reason: 'Pending',
      message,
      ready: { type: 'Ready', status: 'False', reason: 'Pending', message },
      error: reason === 'InvalidRequest' ? message : null,
      actions: [],
      patch: { conditions: [{ type: 'Resolved', status: 'False', reason, message }] as AccessCondition[] },
    };
  }
  const automatic = resolution.approvalMode === 'Automatic';
  return {
    phase: automatic ? 'Applying' : 'PendingApproval',
    reason: 'Resolved',
    message: `resolved ${resolution.resolvedAccess.memberships.length} membership(s) for ${resolution.resolvedAccess.grantedDuration}`,
    actions: [],
    patch: {
      resolvedAccess: resolution.resolvedAccess,
      approvalExpiresAt: timestamp(now + resolution.pendingTtlSeconds * 1000),
      // Automatic access starts its clock at resolution, persisted before any SQL.
      ...(automatic
        ? { activatedAt: timestamp(now), expiresAt: timestamp(now + resolution.grantedSeconds * 1000) }
        : {}),
    },
  };
}

function decideApplying(
  input: RequestInput,
  resolved: ResolvedAccess,
  activation: PlanState,
  revoke: PlanState,
  expiresAt: number | undefined,
  hasFinalizer: boolean,
): Step {
  const { request, resolution, target, now } = input;
  const phase: RequestPhase = 'Applying';
  let stop: { phase: RequestPhase; reason: string; message: string } | null = null;
  if (resolution?.ok === true) {
    const changed = changedSince(resolved, snapshotMode(request, phase), resolution);
    if (changed !== null) stop = { phase: 'Cancelled', reason: 'AccessPolicyChanged', message: changed };
  } else if (resolution?.ok === false && resolution.reason === 'Suspended') {
    stop = { phase: 'Cancelled', reason: 'AccessPolicySuspended', message: resolution.message };
  }
  if (stop === null && (expiresAt === undefined || now >= expiresAt)) {
    stop =
      activation === 'absent'
        ? {
            phase: 'Cancelled',
            reason: 'ExpiredBeforeActivation',
            message: 'the access expired before activation started',
          }
        : {
            phase: 'Ended',
            reason: 'ExpiredDuringActivation',
            message: 'the access expired during activation',
          };
  }
  if (stop !== null) return stopHolding(phase, activation, revoke, stop, input);
  if (resolution?.ok === false) return invalidState(phase, resolution.message);
  if (snapshotMode(request, phase) === 'Required') {
    const problem = approvalProblem(request, resolved);
    if (problem !== null)
      return invalidState(
        phase,
        problem === 'none' ? 'no Approved decision attests this bundle' : `approval refused: ${problem}`,
      );
  }
  switch (activation) {
    case 'Applied':
      return {
        phase: 'Active',
        reason: 'MembershipsGranted',
        message: `granted until ${request.status?.expiresAt}`,
        actions: [],
        applied: grantedCondition(),
      };
    case 'Failed':
      return {
        phase: 'Failed',
        reason: 'ActivationFailed',
        message: planError(input.activationPlan),
        error: planError(input.activationPlan),
        actions: [],
        patch: { endedAt: timestamp(now) },
      };
    case 'Applying':
      return {
        phase,
        reason: phase,
        message: 'activation running',
        actions: drive(activation, 'Activate'),
        waiting: true,
      };
    default: {
      if (!hasFinalizer)
        return { phase, reason: phase, message: 'waiting for the finalizer', actions: [], waiting: true };
      if (target === null || target.managedDatabaseIdentity === null) {
        const message = `PostgresPolicy ${request.status?.resolvedAccess?.targetPolicyUid ?? ''} has no managed database identity yet (it has not been planned)`;
        return { phase, reason: phase, message, error: message, actions: [], waiting: true };
      }
      return {
        phase,
        reason: phase,
        message: 'activation requested',
        actions: drive(activation, 'Activate'),
        waiting: true,
      };
    }
  }
}

/**
 * Ends a request that may hold access: nothing granted → the final phase at once; an activation still
 * running → wait for its report; granted → revoke, then the final phase.
 */
function stopHolding(
  phase: RequestPhase,
  activation: PlanState,
  revoke: PlanState,
  final: { phase: RequestPhase; reason: string; message: string },
  input: RequestInput,
): Step {
  if (activation === 'Applying' && phase === 'Applying') {
    return {
      phase,
      reason: phase,
      message: `${final.message}; waiting for the running activation before revoking`,
      actions: drive(activation, 'Activate'),
      waiting: true,
    };
  }
  if (activation !== 'Applied' && phase === 'Applying') {
    return { ...final, actions: [], patch: { endedAt: timestamp(input.now) } };
  }
  if (phase === 'Active') {
    // Show the revocation in progress; the final phase follows from Revoking.
    return {
      phase: 'Revoking',
      reason: final.reason,
      message: final.message,
      actions: drive(revoke, 'Revoke'),
      applied: grantedCondition(),
    };
  }
  return finishRevoking(phase, revoke, input, final);
}

/** Drives the revoke plan and, once applied, moves to the final phase with the retained memberships. */
function finishRevoking(
  phase: RequestPhase,
  revoke: PlanState,
  input: RequestInput,
  final: { phase: RequestPhase; reason: string; message: string },
): Step {
  if (revoke !== 'Applied') {
    const failed = revoke === 'Failed' ? planError(input.revokePlan) : null;
    return {
      phase,
      reason: phase === 'Revoking' ? 'Revoking' : phase,
      message: `${final.message}; revoking`,
      actions: drive(revoke, 'Revoke'),
      waiting: true,
      applied: grantedCondition(),
      ...(failed === null ? {} : { error: `revocation failed, retrying: ${failed}` }),
    };
  }
  const retained = input.request.status?.retainedMemberships ?? [];
  const permanent = final.phase === 'Ended' && final.reason === 'MembershipsRevoked' && retained.length > 0;
  const reason = permanent ? 'MembershipBecamePermanent' : final.reason;
  return {
    phase: final.phase,
    reason,
    message: permanent
      ? `${final.message}; ${retained.length} membership(s) kept because the base policy declares them`
      : final.message,
    actions: [],
    applied: { type: 'Applied', status: 'False', reason: 'MembershipsRevoked' },
    patch: { endedAt: timestamp(input.now) },
  };
}

/** Builds the status of a step; null when it equals the current one. */
function finish(
  input: RequestInput,
  from: RequestPhase,
  step: Step,
  finalizer: RequestAction[],
): RequestDecision {
  const { request, now } = input;
  const current = request.status ?? {};
  const stamp = timestamp(now);
  const previous = current.conditions ?? [];
  const changed = step.phase !== from;
  const next: EphemeralAccessRequestStatus = { ...current, ...step.patch, phase: step.phase };
  const resolved = next.resolvedAccess ?? null;
  const mine: AccessCondition[] = [];
  const resolvedCondition =
    resolved !== null
      ? stampCondition(
          previous,
          {
            type: 'Resolved',
            status: 'True',
            reason: 'AccessPolicyResolved',
            bundleHash: resolved.bundleHash,
            grantedDuration: resolved.grantedDuration,
          },
          stamp,
        )
      : stampCondition(
          previous,
          (step.patch?.conditions?.[0] as ConditionInput | undefined) ?? {
            type: 'Resolved',
            status: 'False',
            reason: 'InvalidRequest',
          },
          stamp,
        );
  mine.push(resolvedCondition);
  const oldReady = previous.find((c) => c.type === 'Ready');
  // A pass without a transition keeps the Ready message of the transition (no status churn while waiting).
  const keepReady =
    !changed && step.ready === undefined && oldReady?.status === 'True' && oldReady.reason === step.phase;
  mine.push(
    keepReady
      ? oldReady
      : stampCondition(
          previous,
          step.ready ?? { type: 'Ready', status: 'True', reason: step.phase, message: step.message },
          stamp,
        ),
  );
  const applied = step.applied === undefined ? previous.find((c) => c.type === 'Applied') : step.applied;
  if (applied != null) mine.push(stampCondition(previous, applied, stamp));
  next.conditions = [...decisionConditions(previous), ...mine];
  if (changed) next.lastError = step.error ?? null;
  else if (step.error !== undefined) next.lastError = step.error === null ? null : errorText(step.error);
  if (next.lastError === null) delete next.lastError;
  if (next.retainedMemberships === undefined) next.retainedMemberships = current.retainedMemberships ?? [];
  const deadline =
    step.phase === 'PendingApproval' && next.approvalExpiresAt
      ? { kind: 'approval' as const, at: instant(next.approvalExpiresAt)! }
      : (step.phase === 'Applying' || step.phase === 'Active') && next.expiresAt
        ? { kind: 'expiry' as const, at: instant(next.expiresAt)! }
        : null;
  return {
    status: sameStatus(current, next) ? null : next,
    actions: [...finalizer, ...step.actions],
    transition: changed ? { from, to: step.phase, reason: step.reason, message: step.message } : null,
    deadline,
    waiting: step.waiting === true,
  };
}

/** Equal statuses, reading absent and null alike and an absent phase as Pending. */
export function sameStatus(a: EphemeralAccessRequestStatus, b: EphemeralAccessRequestStatus): boolean {
  const norm = (s: EphemeralAccessRequestStatus) => ({
    ...s,
    retainedMemberships: s.retainedMemberships ?? [],
    phase: s.phase ?? 'Pending',
  });
  return sameJson(norm(a), norm(b));
}
