// The EphemeralAccessRequest state machine (operator notes 4.2, 4.3, 4.7) as one pure decision: from the
// request, its resolution now, its scoped plans and the clock to a status, actions and the next deadline.
// Level-triggered: nothing depends on having seen an earlier pass; every pass re-derives our conditions.
import type { AccessCondition, EphemeralAccessRequestStatus, ResolvedAccess } from '@rolepolicy/kube';
import { verifyResolvedAccess } from '@rolepolicy/policy';
import { accessClock } from './clock.js';
import { decisionConditions, stampCondition, type ConditionInput } from './conditions.js';
import { drive, planState } from './request-checks.js';
import { decideLive } from './request-phases.js';
import {
  isTerminal,
  REQUEST_FINALIZER,
  type RequestAction,
  type RequestDecision,
  type RequestInput,
  type RequestPhase,
  type Step,
} from './request-types.js';
import { sameJson } from './same.js';
import { errorText } from './scoped-plan.js';
import { instant, timestamp } from './time.js';

export * from './request-types.js';

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

  const resolved = status.resolvedAccess ?? null;
  const verified = resolved === null ? null : verifyResolvedAccess(resolved);
  if (isTerminal(phase)) {
    const held = resolved !== null && verified?.ok === true ? unreleasedHold(input, phase, resolved) : null;
    if (held !== null) return finish(input, phase, held, []);
    return deleting && hasFinalizer ? { ...none, actions: [{ kind: 'removeFinalizer' }] } : none;
  }
  if (deleting) return hasFinalizer ? decideDeletion(input, phase, resolved, verified?.ok === true) : none;

  const finalizer: RequestAction[] = hasFinalizer ? [] : [{ kind: 'addFinalizer' }];
  const step = decideLive(input, phase, resolved, verified, hasFinalizer);
  return finish(input, phase, step, finalizer);
}

/**
 * A terminal phase the scheduler did not write (ADR 0020): it moves a request to a terminal phase after a
 * grant only once the revoke plan is Applied. With the activation plan Applying or Applied and no applied
 * revoke, the phase was written by someone else: the holding phase is written back (and nothing else this
 * pass, so the revoke that follows finds the request holding), and the duty to revoke goes on: at the
 * approved expiry, at once if it is past, or at deletion.
 */
function unreleasedHold(input: RequestInput, phase: RequestPhase, resolved: ResolvedAccess): Step | null {
  const { request } = input;
  const activation = planState(input.activationPlan, request, 'Activate', resolved.bundleHash);
  if (activation !== 'Applying' && activation !== 'Applied') return null;
  const revoke = planState(input.revokePlan, request, 'Revoke', resolved.bundleHash);
  if (revoke === 'Applied') return null;
  const held: RequestPhase =
    activation === 'Applying'
      ? 'Applying'
      : revoke === 'absent' || revoke === 'foreign'
        ? 'Active'
        : 'Revoking';
  const message = `status.phase ${phase} was not written by the access-scheduler: the activation is ${activation} and no revocation ran; back to ${held} until the memberships are revoked`;
  return {
    phase: held,
    reason: 'UnrevokedTerminalPhase',
    message,
    ready: { type: 'Ready', status: 'True', reason: held, message },
    error: message,
    actions: [],
    waiting: true,
    ...(activation === 'Applied'
      ? { applied: { type: 'Applied', status: 'True', reason: 'MembershipsGranted' } as ConditionInput }
      : {}),
  };
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
  if (revoke === 'foreign') {
    // Never released on a plan the scheduler did not make: delete it, then revoke with our own.
    return { ...base, actions: [{ kind: 'deletePlan', operation: 'Revoke' }], waiting: true };
  }
  return { ...base, actions: drive(revoke, 'Revoke'), waiting: true };
}

/** Reason of an awaited decision while no admission policy authenticates it (ADR 0026, docs/approvals.md). */
export const APPROVAL_UNAUTHENTICATED_REASON = 'ApprovalUnauthenticated';

/**
 * `Ready=True` with the phase as reason; a request waiting for a person's decision while decisions are
 * unauthenticated says so instead (a request may carry only the five condition types the CRD allows).
 */
function readyCondition(step: Step, decisionsUnauthenticated: boolean): ConditionInput {
  if (step.phase === 'PendingApproval' && decisionsUnauthenticated) {
    return {
      type: 'Ready',
      status: 'True',
      reason: APPROVAL_UNAUTHENTICATED_REASON,
      message: `${step.message}; decisions are unauthenticated: no admission policy makes decidedBy the decider's own (docs/approvals.md)`,
    };
  }
  return { type: 'Ready', status: 'True', reason: step.phase, message: step.message };
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
  const ready = step.ready ?? readyCondition(step, input.decisionsUnauthenticated === true);
  // A pass without a transition keeps the Ready message of the transition (no status churn while waiting).
  const keepReady =
    !changed && step.ready === undefined && oldReady?.status === 'True' && oldReady.reason === ready.reason;
  mine.push(keepReady ? oldReady : stampCondition(previous, ready, stamp));
  const applied = step.applied === undefined ? previous.find((c) => c.type === 'Applied') : step.applied;
  if (applied != null) mine.push(stampCondition(previous, applied, stamp));
  next.conditions = [...decisionConditions(previous), ...mine];
  if (changed) next.lastError = step.error ?? null;
  else if (step.error !== undefined) next.lastError = step.error === null ? null : errorText(step.error);
  if (next.lastError === null) delete next.lastError;
  if (next.retainedMemberships === undefined) next.retainedMemberships = current.retainedMemberships ?? [];
  // expiresAt is a report of the clock, never its source: a value someone else wrote is corrected back.
  const holding = step.phase === 'Applying' || step.phase === 'Active' || step.phase === 'Revoking';
  const clock =
    resolved === null
      ? undefined
      : accessClock(
          { ...request, status: next },
          input.activationPlan,
          planState(input.activationPlan, request, 'Activate', resolved.bundleHash),
        );
  if (holding && clock?.expiresAt !== undefined) next.expiresAt = timestamp(clock.expiresAt);
  const deadline =
    step.phase === 'PendingApproval' && next.approvalExpiresAt
      ? { kind: 'approval' as const, at: instant(next.approvalExpiresAt)! }
      : (step.phase === 'Applying' || step.phase === 'Active') && clock?.expiresAt !== undefined
        ? { kind: 'expiry' as const, at: clock.expiresAt }
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
