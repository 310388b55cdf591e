// The decision table for a successfully computed plan: identity refusal, blockers, stuck executions,
// then the current plan's decision (none, denied, approved, pending) routed to the branches.

import { executionGate, planDecision, planPhase } from './approval.js';
import { identityVerdict, recordedIdentity } from './execution-verdict.js';
import type { ComputedPlan } from './outcome.js';
import type { PostgresPolicyPlan } from './resources.js';
import { failedPatch, phasePatch, type SupersedeCause } from './plan-patches.js';
import { composeStatus, cond } from './policy-status.js';
import type { ReconcileStep } from './steps.js';
import {
  type ReconcileDecision,
  toMillis,
  newestFirst,
  sameEffects,
  type Ctx,
  finish,
  failureDecision,
  computedFields,
  supersedeStep,
  failClosedStep,
  driftedCondition,
} from './decision-context.js';
import { converged, holdForTerminalPlan, routeExisting, createAndRoute } from './decide-routes.js';

/** Decides a reconcile whose inspection and planning succeeded. */
export function decideComputed(ctx: Ctx, computed: ComputedPlan): ReconcileDecision {
  const { policy } = ctx;
  const refused = refusedPlanning(ctx, computed);
  if (refused !== null) return refused;
  const { before, interrupted } = interruptedExecutions(ctx);
  const applying = ctx.owned.find((p) => planPhase(p) === 'Applying' && !interrupted.has(p.metadata.name));
  const gate = executionGate(policy.spec);
  const base = computedFields(ctx, computed);
  if (applying) {
    const status = composeStatus(
      policy,
      ctx.now,
      {
        Ready: cond('Unknown', 'Applying', `plan ${applying.metadata.name} is being applied`),
        Reconciling: cond('True', 'Applying', `plan ${applying.metadata.name} is being applied`),
        Drifted: cond('True', 'DriftDetected', `plan ${applying.metadata.name} is being applied`),
      },
      { ...base, current_plan_ref: { name: applying.metadata.name } },
      computed.additiveIgnoredAbsence,
    );
    return finish(ctx, 'applying', before, status, [], ctx.intervalSeconds);
  }

  const actionable = ctx.owned
    .filter((p) => planPhase(p) === 'Pending' || planPhase(p) === 'Approved')
    .sort(newestFirst);
  const preferred = actionable.findIndex((p) => p.metadata.name === ctx.preferredPlan);
  if (preferred > 0) actionable.unshift(...actionable.splice(preferred, 1));
  const current = actionable[0];
  const others = actionable.slice(1);
  const hasChanges = computed.changeCount > 0;
  const transferBlocked = computed.ownerTransferBlocked && gate !== 'never';

  if (current === undefined) {
    if (!hasChanges) return converged(ctx, computed, before, []);
    const stale = appliedDuringInspection(ctx, computed);
    if (stale) {
      // The changes may be the ones that plan just committed: look again instead of planning them twice.
      return finish(ctx, 'stale_snapshot', before, ctx.policy.status ?? {}, [], 1);
    }
    const hold = ctx.forced ? null : holdForTerminalPlan(ctx, computed);
    if (hold) return hold;
    return createAndRoute(ctx, computed, gate, transferBlocked, before, null, others);
  }

  const decision = planDecision(current);
  if (decision === 'denied') {
    const steps: ReconcileStep[] = [
      ...before,
      { kind: 'patchPlanStatus', patch: phasePatch(current, 'Rejected'), purpose: { kind: 'reject' } },
    ];
    const message = `plan ${current.metadata.name} was denied; a new plan is computed at the next reconcile`;
    const status = composeStatus(
      policy,
      ctx.now,
      { Ready: cond('True', 'Planned', message), Drifted: driftedCondition(hasChanges) },
      { ...base, current_plan_ref: null },
      computed.additiveIgnoredAbsence,
    );
    return finish(ctx, 'rejected', steps, status, [], ctx.intervalSeconds);
  }

  if (decision === 'approved') {
    return routeApproved(ctx, computed, { gate, transferBlocked, before, current, others, hasChanges });
  }

  // Undecided pending plan: revalidated on every reconcile.
  if (!hasChanges) {
    return converged(ctx, computed, before, [
      supersedeStep(current, { kind: 'EffectsCleared' }, ctx.now),
      ...others.map((p) => supersedeStep(p, { kind: 'EffectsCleared' }, ctx.now)),
    ]);
  }
  if (!sameEffects(current, computed)) {
    return createAndRoute(
      ctx,
      computed,
      gate,
      transferBlocked,
      before,
      { plan: current, cause: { kind: 'EffectsChanged' } },
      others,
    );
  }
  return routeExisting(ctx, computed, gate, transferBlocked, before, current, others);
}

/**
 * An owned plan applied at or after the inspection behind `computed` was requested, if any. An `appliedAt`
 * in this pass's future (an executor clock ahead of ours) is ignored, so clock skew cannot hold a policy.
 */
function appliedDuringInspection(ctx: Ctx, computed: ComputedPlan): PostgresPolicyPlan | undefined {
  const requested = toMillis(computed.snapshotRequestedAt);
  const now = toMillis(ctx.now);
  if (requested === null || now === null) return undefined;
  return ctx.owned.find((plan) => {
    const appliedAt = toMillis(plan.status?.appliedAt);
    return planPhase(plan) === 'Applied' && appliedAt !== null && appliedAt >= requested && appliedAt <= now;
  });
}

/** A computed plan that must not be routed at all: the target cannot be identified as required, or it is blocked. */
function refusedPlanning(ctx: Ctx, computed: ComputedPlan): ReconcileDecision | null {
  const { policy } = ctx;
  if (policy.spec.connection.requirePhysicalIdentity === true && computed.identity.physical === null) {
    return failureDecision(
      ctx,
      'identity_blocked',
      {
        class: 'permanent',
        reason: 'PhysicalIdentityRequired',
        message:
          'requirePhysicalIdentity is set and the target physical identity (system_identifier) cannot be read; planning refused',
      },
      {
        TargetIdentityBlocked: cond(
          'True',
          'PhysicalIdentityRequired',
          'the target physical identity cannot be read',
        ),
      },
    );
  }
  if (computed.blockers.length > 0) {
    return failureDecision(
      ctx,
      'blocked',
      { class: 'permanent', reason: 'PlanBlocked', message: computed.blockers.join('; ') },
      {},
      { current_plan_ref: null },
    );
  }

  return null;
}

/**
 * Plans Applying for longer than stuckApplyingSeconds whose executor never reported: marked Failed, so they
 * no longer hold the policy (the steps come first in the decision).
 */
function interruptedExecutions(ctx: Ctx): { before: ReconcileStep[]; interrupted: ReadonlySet<string> } {
  const before: ReconcileStep[] = [];
  const nowMs = toMillis(ctx.now) ?? 0;
  const interrupted = new Set<string>();
  for (const plan of ctx.owned) {
    // A missing applyingSince (a writer bug) must not pin the policy forever: fall back to older stamps.
    // Marking a live execution Failed is safe: the lock and the digest re-check stop a second run.
    const since = toMillis(
      plan.status?.applyingSince ?? plan.status?.revalidatedAt ?? plan.status?.computedAt,
    );
    if (
      planPhase(plan) === 'Applying' &&
      since !== null &&
      nowMs - since > ctx.settings.stuckApplyingSeconds * 1000
    ) {
      interrupted.add(plan.metadata.name);
      before.push({
        kind: 'patchPlanStatus',
        patch: failedPatch(
          plan,
          'ExecutionInterrupted',
          `execution interrupted: no executor report within ${ctx.settings.stuckApplyingSeconds}s`,
          ctx.now,
        ),
        purpose: { kind: 'interrupted' },
      });
    }
  }
  return { before, interrupted };
}

interface Routing {
  readonly gate: ReturnType<typeof executionGate>;
  readonly transferBlocked: boolean;
  readonly before: readonly ReconcileStep[];
  readonly current: PostgresPolicyPlan;
  readonly others: readonly PostgresPolicyPlan[];
  readonly hasChanges: boolean;
}

/** An approved plan: fails closed or is superseded when the target or its effects moved, else it is routed. */
function routeApproved(ctx: Ctx, computed: ComputedPlan, routing: Routing): ReconcileDecision {
  const { policy } = ctx;
  const { gate, transferBlocked, before, current, others, hasChanges } = routing;
  const verdict = identityVerdict({
    requirePhysicalIdentity: policy.spec.connection.requirePhysicalIdentity === true,
    approved: recordedIdentity(current),
    observed: { physical: computed.identity.physical, logical: computed.identity.logicalFingerprint },
  });
  if (verdict.kind === 'fail_closed') {
    // The approval was given for a target this reading cannot prove: the plan fails closed, exactly as
    // the executor would have failed it, and the current reading is planned afresh for a new decision.
    const failed = failClosedStep(current, verdict.reason, verdict.message, ctx.now);
    if (!hasChanges) return converged(ctx, computed, [...before, failed], []);
    return createAndRoute(ctx, computed, gate, transferBlocked, [...before, failed], null, others);
  }
  if (verdict.kind === 'superseded') {
    const cause: SupersedeCause = {
      kind: 'TargetIdentity',
      reason: verdict.reason,
      message: verdict.message,
    };
    if (!hasChanges) return converged(ctx, computed, before, [supersedeStep(current, cause, ctx.now)]);
    return createAndRoute(ctx, computed, gate, transferBlocked, before, { plan: current, cause }, others);
  }
  if (!sameEffects(current, computed)) {
    if (!hasChanges) {
      return converged(ctx, computed, before, [supersedeStep(current, { kind: 'EffectsCleared' }, ctx.now)]);
    }
    return createAndRoute(
      ctx,
      computed,
      gate,
      transferBlocked,
      before,
      { plan: current, cause: { kind: 'EffectsChanged' } },
      others,
    );
  }
  return routeExisting(ctx, computed, gate, transferBlocked, before, current, others);
}
