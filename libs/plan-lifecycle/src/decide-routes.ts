// The branches of the decision table once a plan is computed: converge, hold, publish, keep and
// execute, or create-then-supersede. Each returns the finished decision.

import { executionGate, planDecision, planPhase, type ExecutionGate } from './approval.js';
import { findCondition } from './conditions.js';
import type { ComputedPlan } from './outcome.js';
import { buildPlan } from './plan-builder.js';
import {
  autoApprovePatch,
  pendingApprovalPatch,
  phasePatch,
  revalidatePatch,
  type SupersedeCause,
} from './plan-patches.js';
import { composeStatus, cond, type OutcomeConditions } from './policy-status.js';
import { type PostgresPolicyPlan, type PostgresPolicyStatus } from './resources.js';
import type { ReconcileStep } from './steps.js';
import {
  type DecisionKind,
  type ReconcileDecision,
  NOTHING_TO_APPLY,
  toMillis,
  newestFirst,
  sameEffects,
  executionRequest,
  type Ctx,
  finish,
  computedFields,
  supersedeStep,
  driftedCondition,
} from './decision-context.js';

/**
 * The status the Applied result of the plan this pass verifies recorded (`Ready=True/Reconciled`,
 * `Drifted=False`, this generation, the plan as `current_plan_ref`), or null. A pass that finds nothing left
 * to change confirms it: it keeps the result's message, plan reference, summary and time, so an unchanged
 * status is not written a second time (issue 28). Anything else it finds (warnings, password versions) is.
 */
function appliedResultStatus(ctx: Ctx): PostgresPolicyStatus | null {
  const status = ctx.policy.status;
  if (ctx.verifying === undefined || status?.current_plan_ref?.name !== ctx.verifying) return null;
  const ready = findCondition(status.conditions, 'Ready');
  const drifted = findCondition(status.conditions, 'Drifted');
  const confirmed =
    ready?.status === 'True' &&
    ready.reason === 'Reconciled' &&
    drifted?.status === 'False' &&
    status.observed_generation === ctx.policy.metadata.generation;
  return confirmed ? status : null;
}

/**
 * Nothing to apply. The status (plan reference cleared) is written before any plan is superseded, so a
 * crash in between leaves a findable pending plan rather than a reference to a superseded one. The pass
 * verifying an apply keeps what the Applied result recorded (`appliedResultStatus`).
 */
export function converged(
  ctx: Ctx,
  computed: ComputedPlan,
  before: readonly ReconcileStep[],
  supersedes: readonly ReconcileStep[],
): ReconcileDecision {
  const { policy } = ctx;
  const observe = executionGate(policy.spec) === 'never';
  const applied = observe || supersedes.length > 0 ? null : appliedResultStatus(ctx);
  const appliedReady = findCondition(applied?.conditions, 'Ready')?.message ?? NOTHING_TO_APPLY;
  const status = composeStatus(
    policy,
    ctx.now,
    {
      Ready: observe
        ? cond('True', 'Planned', 'drift computed: none')
        : cond('True', 'Reconciled', appliedReady),
      Drifted: driftedCondition(false),
    },
    {
      ...computedFields(ctx, computed),
      current_plan_ref: applied?.current_plan_ref ?? null,
      observed_generation: policy.metadata.generation,
      last_successful_reconcile_time: applied?.last_successful_reconcile_time ?? ctx.now,
      ...(observe ? {} : { applied_password_source_versions: { ...computed.passwordSourceVersions } }),
      ...(applied === null ? {} : { change_summary: applied.change_summary ?? null }),
    },
    computed.additiveIgnoredAbsence,
  );
  return finish(ctx, observe ? 'observed' : 'reconciled', before, status, supersedes, ctx.intervalSeconds);
}

/**
 * No live plan and changes to make: hold off re-creating a plan whose identical effects were denied
 * (same generation, within one interval) or failed within the retry window. A forced reconcile skips this.
 */
export function holdForTerminalPlan(ctx: Ctx, computed: ComputedPlan): ReconcileDecision | null {
  const nowMs = toMillis(ctx.now) ?? 0;
  const same = ctx.owned.filter((p) => sameEffects(p, computed)).sort(newestFirst);
  for (const plan of same) {
    const phase = planPhase(plan);
    if (phase === 'Rejected' || (phase === 'Pending' && planDecision(plan) === 'denied')) {
      // A decision written without a transition time is dated by the plan's last confirmation instead.
      const deniedAt = toMillis(
        findCondition(plan.status?.conditions, 'Denied')?.last_transition_time ??
          plan.status?.revalidatedAt ??
          plan.status?.computedAt,
      );
      const sameGeneration =
        (plan.status?.revalidatedGeneration ?? plan.spec.policyGeneration) === ctx.policy.metadata.generation;
      const elapsed = deniedAt === null ? Number.POSITIVE_INFINITY : (nowMs - deniedAt) / 1000;
      if (sameGeneration && elapsed >= 0 && elapsed < ctx.intervalSeconds) {
        const message = `plan ${plan.metadata.name} with these effects was denied; a new plan follows after the interval, an edit, or a forced reconcile`;
        const status = composeStatus(
          ctx.policy,
          ctx.now,
          { Ready: cond('True', 'Planned', message), Drifted: driftedCondition(true) },
          { ...computedFields(ctx, computed), current_plan_ref: null },
          computed.additiveIgnoredAbsence,
        );
        return finish(ctx, 'rejection_hold', [], status, [], Math.max(1, ctx.intervalSeconds - elapsed));
      }
    }
    if (phase === 'Failed') {
      const failedAt = toMillis(plan.status?.failedAt);
      const appliedAt = toMillis(plan.status?.appliedAt);
      if (failedAt === null || failedAt > nowMs || (appliedAt !== null && appliedAt > failedAt)) continue;
      const elapsed = (nowMs - failedAt) / 1000;
      if (elapsed < ctx.settings.failedRetryWindowSeconds) {
        const message = `plan ${plan.metadata.name} with these effects failed ${Math.floor(elapsed)}s ago; retrying after ${ctx.settings.failedRetryWindowSeconds}s`;
        const status = composeStatus(
          ctx.policy,
          ctx.now,
          {
            Ready: cond('False', 'PlanRetryDeferred', message),
            Degraded: cond('True', 'PlanRetryDeferred', message),
            Drifted: driftedCondition(true),
          },
          {
            ...computedFields(ctx, computed),
            last_error: ctx.policy.status?.last_error ?? plan.status?.lastError ?? message,
            transient_failure_count: ctx.policy.status?.transient_failure_count ?? 0,
          },
          computed.additiveIgnoredAbsence,
        );
        return finish(
          ctx,
          'retry_deferred',
          [],
          status,
          [],
          Math.max(1, ctx.settings.failedRetryWindowSeconds - elapsed),
        );
      }
    }
  }
  return null;
}

/** Status of a policy whose plan is published but not executing (manual wait, observe, transfer block). */
export function planPublishedStatus(
  ctx: Ctx,
  computed: ComputedPlan,
  gate: ExecutionGate,
  transferBlocked: boolean,
  plan: PostgresPolicyPlan,
): { kind: DecisionKind; status: PostgresPolicyStatus } {
  const { policy } = ctx;
  const name = plan.metadata.name;
  const fields: PostgresPolicyStatus = { ...computedFields(ctx, computed), current_plan_ref: { name } };
  if (transferBlocked) {
    const message = `plan ${name} transfers schema ownership in adopt mode and allow_schema_owner_transfers is false; it will not be executed`;
    const status = composeStatus(
      policy,
      ctx.now,
      {
        Ready: cond('False', 'OwnerTransferBlocked', message),
        Degraded: cond('True', 'OwnerTransferBlocked', message),
        OwnerTransferBlocked: cond('True', 'OwnerTransferBlocked', message),
        Drifted: driftedCondition(true),
      },
      { ...fields, last_error: message },
      computed.additiveIgnoredAbsence,
    );
    return { kind: 'owner_transfer_blocked', status };
  }
  if (gate === 'never') {
    const approvedIgnored: OutcomeConditions =
      planDecision(plan) === 'approved'
        ? {
            ApprovalIgnored: cond(
              'True',
              'ObserveModeNeverExecutes',
              `plan ${name} is approved but observe mode never executes`,
            ),
          }
        : {};
    const status = composeStatus(
      policy,
      ctx.now,
      {
        Ready: cond('True', 'Planned', `drift computed in plan ${name}; observe mode never executes`),
        Drifted: driftedCondition(true),
        ...approvedIgnored,
      },
      { ...fields, observed_generation: policy.metadata.generation, last_successful_reconcile_time: ctx.now },
      computed.additiveIgnoredAbsence,
    );
    return { kind: 'observed', status };
  }
  const status = composeStatus(
    policy,
    ctx.now,
    {
      Ready: cond('True', 'Planned', `plan ${name} awaits an Approved or Denied decision`),
      Drifted: driftedCondition(true),
    },
    fields,
    computed.additiveIgnoredAbsence,
  );
  return { kind: 'awaiting_approval', status };
}

/** Status while an approved plan is handed to the executor: Ready=Unknown/Applying, Reconciling=True. */
export function executingStatus(
  ctx: Ctx,
  computed: ComputedPlan,
  plan: PostgresPolicyPlan,
): PostgresPolicyStatus {
  const message = `plan ${plan.metadata.name} is approved; execution requested`;
  return composeStatus(
    ctx.policy,
    ctx.now,
    {
      Ready: cond('Unknown', 'Applying', message),
      Reconciling: cond('True', 'Applying', message),
      Drifted: driftedCondition(computed.changeCount > 0),
    },
    { ...computedFields(ctx, computed), current_plan_ref: { name: plan.metadata.name } },
    computed.additiveIgnoredAbsence,
  );
}

/**
 * Keep the current plan (same effects): advance its revalidation provenance, then execute it when it is
 * approved (or auto-approve it), otherwise leave it waiting. Other live plans are superseded by it.
 */
export function routeExisting(
  ctx: Ctx,
  computed: ComputedPlan,
  gate: ExecutionGate,
  transferBlocked: boolean,
  before: readonly ReconcileStep[],
  current: PostgresPolicyPlan,
  others: readonly PostgresPolicyPlan[],
): ReconcileDecision {
  const steps: ReconcileStep[] = [...before];
  const generation = ctx.policy.metadata.generation;
  if (current.status?.revalidatedGeneration !== generation) {
    steps.push({
      kind: 'patchPlanStatus',
      patch: revalidatePatch(current, generation, ctx.now),
      purpose: { kind: 'revalidate' },
    });
  }
  for (const other of others) {
    if (planDecision(other) === 'approved' && sameEffects(other, computed)) continue;
    steps.push(supersedeStep(other, { kind: 'ReplacedByNewerPlan', by: current.metadata.name }, ctx.now));
  }
  const decision = planDecision(current);
  const executable = !transferBlocked && (gate === 'auto' || (gate === 'manual' && decision === 'approved'));
  // A plan waiting for a person says whether their decision will be authenticated (ADR 0026).
  const restamp =
    gate === 'manual' && decision === 'undecided' && ctx.decisions !== undefined
      ? pendingApprovalPatch(current, ctx.decisions, ctx.now)
      : null;
  if (restamp !== null)
    steps.push({ kind: 'patchPlanStatus', patch: restamp, purpose: { kind: 'approvalAuthentication' } });
  if (!executable) {
    const published = planPublishedStatus(ctx, computed, gate, transferBlocked, current);
    return finish(ctx, published.kind, steps, published.status, [], ctx.intervalSeconds);
  }
  if (decision === 'undecided') {
    steps.push({
      kind: 'patchPlanStatus',
      patch: autoApprovePatch(current, ctx.now),
      purpose: { kind: 'autoApprove' },
    });
  } else if (planPhase(current) === 'Pending') {
    steps.push({
      kind: 'patchPlanStatus',
      patch: phasePatch(current, 'Approved'),
      purpose: { kind: 'recordApprovedPhase' },
    });
  }
  const status = executingStatus(ctx, computed, current);
  return finish(
    ctx,
    'execution_requested',
    steps,
    status,
    [{ kind: 'requestExecution', request: executionRequest(ctx.policy, current) }],
    ctx.intervalSeconds,
  );
}

/**
 * Publish a new plan for these effects, then (only once it exists) supersede what it replaces, write the
 * status, and request execution when the gate is auto and nothing blocks it.
 */
export function createAndRoute(
  ctx: Ctx,
  computed: ComputedPlan,
  gate: ExecutionGate,
  transferBlocked: boolean,
  before: readonly ReconcileStep[],
  replaced: { readonly plan: PostgresPolicyPlan; readonly cause: SupersedeCause } | null,
  others: readonly PostgresPolicyPlan[],
): ReconcileDecision {
  const autoApprove = gate === 'auto' && !transferBlocked;
  const built = buildPlan({
    policy: ctx.policy,
    computed,
    existingPlanNames: ctx.allNames,
    ...(ctx.nameTaken === undefined ? {} : { nameTaken: ctx.nameTaken }),
    now: ctx.now,
    autoApprove,
    ...(ctx.decisions === undefined ? {} : { decisions: ctx.decisions }),
  });
  const steps: ReconcileStep[] = [
    ...before,
    { kind: 'createPlan', plan: built.plan, configMap: built.configMap },
  ];
  if (replaced) steps.push(supersedeStep(replaced.plan, replaced.cause, ctx.now));
  for (const other of others) {
    steps.push(supersedeStep(other, { kind: 'ReplacedByNewerPlan', by: built.plan.metadata.name }, ctx.now));
  }
  if (!autoApprove) {
    const published = planPublishedStatus(ctx, computed, gate, transferBlocked, built.plan);
    return finish(ctx, published.kind, steps, published.status, [], ctx.intervalSeconds);
  }
  const status = executingStatus(ctx, computed, built.plan);
  return finish(
    ctx,
    'execution_requested',
    steps,
    status,
    [{ kind: 'requestExecution', request: executionRequest(ctx.policy, built.plan) }],
    ctx.intervalSeconds,
  );
}
