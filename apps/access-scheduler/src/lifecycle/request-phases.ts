// The request phases (operator notes 4.2, 4.3, 4.7): each handler reads the pass's input and returns the
// step to take: the next phase, its reason, our conditions, the error to record and the actions. Pure.
import type { AccessCondition, ResolvedAccess } from '@rolepolicy/kube';
import { trueCondition, type ConditionInput } from './conditions.js';
import {
  approvalProblem,
  changedSince,
  drive,
  planError,
  planState,
  snapshotMode,
  type PlanState,
} from './request-checks.js';
import { accessClock, clockTampered } from './clock.js';
import type { RequestInput, RequestPhase, Step } from './request-types.js';
import { foreignPlan, retainedOfPlan } from './scoped-plan.js';
import { instant, timestamp } from './time.js';

export function decideLive(
  input: RequestInput,
  phase: RequestPhase,
  resolved: ResolvedAccess | null,
  verified: { ok: boolean; message?: string } | null,
  hasFinalizer: boolean,
): Step {
  const { request, now } = input;
  if (resolved !== null && verified !== null && !verified.ok) {
    return invalidState(phase, `status.resolvedAccess does not verify: ${verified.message ?? ''}`);
  }
  const denied = trueCondition(request.status?.conditions, 'Denied');
  if (resolved === null) {
    if (denied !== undefined)
      return { phase: 'Denied', reason: 'Denied', message: denied.message ?? 'denied', actions: [] };
    const tampered = clockTampered(request, phase, now);
    if (tampered !== null) return tamperedClock(input, tampered);
    return decidePending(input, phase);
  }
  const activation = planState(input.activationPlan, request, 'Activate', resolved.bundleHash);
  const revoke = planState(input.revokePlan, request, 'Revoke', resolved.bundleHash);
  if (activation === 'foreign' || revoke === 'foreign') return squatted(input, phase, activation, revoke);
  // Never status.expiresAt: anyone who may patch status could move it (ADR 0020).
  const expiresAt = accessClock(request, input.activationPlan, activation).expiresAt;
  const until = expiresAt === undefined ? '(unset)' : timestamp(expiresAt);

  // 1. Denied is a kill switch, also for Automatic requests.
  if (denied !== undefined) {
    const why = `denied${denied.message ? `: ${denied.message}` : ''}`;
    if (phase === 'Pending' || phase === 'PendingApproval')
      return { phase: 'Denied', reason: 'Denied', message: why, actions: [] };
    return stopHolding(phase, activation, revoke, { phase: 'Denied', reason: 'Denied', message: why }, input);
  }
  // A clock someone else started before activation: nothing was granted, and nothing will be.
  const tampered = activation === 'absent' ? clockTampered(request, phase, now) : null;
  if (tampered !== null && phase !== 'Active' && phase !== 'Revoking') return tamperedClock(input, tampered);
  switch (phase) {
    case 'Pending':
      // Recorded snapshot but phase lost (e.g. a status write replaced it): resume from the snapshot's mode.
      return {
        phase: 'PendingApproval',
        reason: 'Resolved',
        message: 'resumed from the recorded snapshot',
        actions: [],
      };
    case 'PendingApproval':
      return decidePendingApproval(input, phase, resolved);
    case 'Applying':
      return decideApplying(input, resolved, activation, revoke, expiresAt, hasFinalizer);
    case 'Active':
      if (expiresAt === undefined || now >= expiresAt) {
        return {
          phase: 'Revoking',
          reason: 'AccessExpired',
          message: `access expired at ${until}`,
          actions: drive(revoke, 'Revoke'),
          applied: grantedCondition(),
        };
      }
      return {
        phase,
        reason: 'Active',
        message: `granted until ${until}`,
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

/** A resolved request waiting for its approval: cancelled on a policy change, expired, refused or approved. */
function decidePendingApproval(input: RequestInput, phase: RequestPhase, resolved: ResolvedAccess): Step {
  const { request, resolution, now } = input;
  const approvalExpiresAt = instant(request.status?.approvalExpiresAt);
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

/**
 * A plan name of this request taken by an object the scheduler did not create (ADR 0020): never obeyed. The
 * object is deleted (bound to its uid) and the pass waits; the next pass creates the scheduler's own plan.
 */
function squatted(input: RequestInput, phase: RequestPhase, activation: PlanState, revoke: PlanState): Step {
  const { request } = input;
  const hash = request.status!.resolvedAccess!.bundleHash;
  const operations = [
    ...(activation === 'foreign' ? (['Activate'] as const) : []),
    ...(revoke === 'foreign' ? (['Revoke'] as const) : []),
  ];
  const plans = operations.map((op) =>
    foreignPlan(op === 'Activate' ? input.activationPlan! : input.revokePlan!, request, op, hash),
  );
  const message = `${plans.join('; ')}: it is not obeyed and is being deleted`;
  return {
    phase,
    reason: phase,
    message,
    error: message,
    actions: operations.map((operation) => ({ kind: 'deletePlan', operation })),
    waiting: true,
  };
}

/** Ends a request whose clock someone else set, before anything was granted. */
function tamperedClock(input: RequestInput, message: string): Step {
  return {
    phase: 'Cancelled',
    reason: 'StatusTampered',
    message,
    error: message,
    actions: [],
    patch: { endedAt: timestamp(input.now) },
  };
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
        message: `granted until ${expiresAt === undefined ? '(unset)' : timestamp(expiresAt)}`,
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
      // The revoke needs the target: it may not be deleted while access can be held (ADR 0020).
      if (!target.guarded)
        return {
          phase,
          reason: phase,
          message: `waiting for the finalizer on PostgresPolicy ${target.name}`,
          actions: [],
          waiting: true,
        };
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
  // The revoke plan's record of what was kept is the truth; the status copy only covers older plans.
  const retained = retainedOfPlan(input.revokePlan) ?? input.request.status?.retainedMemberships ?? [];
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
    patch: { endedAt: timestamp(input.now), retainedMemberships: retained },
  };
}
