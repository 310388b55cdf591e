// Turns the executor's report on one plan into the plan status patch and the policy status: Applied
// converges the policy, Failed degrades it (with backoff when transient), refusals supersede or fail closed.

import { transientBackoffSeconds } from './backoff.js';
import type { ExecutionVerdict } from './execution-verdict.js';
import { parseInterval } from './interval.js';
import type { ReconcileError } from './outcome.js';
import { appliedPatch, failedPatch, supersedePatch, type PlanStatusPatch } from './plan-patches.js';
import { composeStatus, cond, sameStatus } from './policy-status.js';
import { redactSecrets } from './redact.js';
import type { PostgresPolicy, PostgresPolicyPlan, PostgresPolicyStatus } from './resources.js';

/** Seconds after a permanent execution failure before the policy is planned again (and held). */
export const FAILED_RECHECK_SECONDS = 2;

/** What the executor reports for one execution request. */
export type ExecutionReport =
  | {
      readonly kind: 'applied';
      /** role -> source version actually applied (real Secret resourceVersions, never the `missing` sentinel). */
      readonly appliedPasswordSourceVersions: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'failed'; readonly error: ReconcileError }
  | { readonly kind: 'refused'; readonly verdict: Exclude<ExecutionVerdict, { readonly kind: 'execute' }> };

/** Inputs of {@link decideAfterExecution}. */
export interface AfterExecutionInput {
  readonly policy: PostgresPolicy;
  readonly plan: PostgresPolicyPlan;
  readonly report: ExecutionReport;
  readonly now: string;
  readonly jitter: number;
}

/** Patches to write after an execution report, and when to reconcile the policy next. */
export interface AfterExecutionDecision {
  readonly planPatch: PlanStatusPatch | null;
  /** Null when the policy status does not change. */
  readonly status: PostgresPolicyStatus | null;
  readonly requeueAfterSeconds: number;
}

function intervalOf(policy: PostgresPolicy): number {
  const parsed = parseInterval(policy.spec.interval);
  return parsed.ok ? parsed.seconds : 300;
}

function orNull(policy: PostgresPolicy, status: PostgresPolicyStatus): PostgresPolicyStatus | null {
  return sameStatus(policy.status, status) ? null : status;
}

/**
 * Applied: plan Applied; policy Ready=True/Reconciled, Drifted=False, `observed_generation` = the
 * generation the plan was last confirmed against, password versions recorded. Failed: plan Failed with
 * `lastError`; policy `last_error`, Degraded, transient count and backoff. Refused: a digest or target
 * change supersedes the plan (the next reconcile plans afresh, immediately); a fail-closed identity
 * verdict fails the plan and degrades the policy.
 */
export function decideAfterExecution(input: AfterExecutionInput): AfterExecutionDecision {
  const { policy, plan, report, now } = input;
  const interval = intervalOf(policy);
  switch (report.kind) {
    case 'applied': {
      const message = `approved plan ${plan.metadata.name} applied`;
      const status = composeStatus(
        policy,
        now,
        {
          Ready: cond('True', 'Reconciled', message),
          Drifted: cond('False', 'InSync', 'the database matches the policy'),
        },
        {
          current_plan_ref: { name: plan.metadata.name },
          observed_generation: plan.status?.revalidatedGeneration ?? plan.spec.policyGeneration,
          last_successful_reconcile_time: now,
          applied_password_source_versions: {
            ...policy.status?.applied_password_source_versions,
            ...report.appliedPasswordSourceVersions,
          },
          change_summary: plan.status?.changeSummary ?? policy.status?.change_summary ?? null,
          last_error: null,
          transient_failure_count: 0,
        },
      );
      return {
        planPatch: appliedPatch(plan, now),
        status: orNull(policy, status),
        requeueAfterSeconds: interval,
      };
    }
    case 'failed': {
      const message = redactSecrets(report.error.message);
      const transient = report.error.class === 'transient';
      const count = transient ? (policy.status?.transient_failure_count ?? 0) + 1 : 0;
      const status = composeStatus(
        policy,
        now,
        {
          Ready: cond('False', report.error.reason, message),
          Degraded: cond('True', report.error.reason, message),
          Drifted: cond('True', 'DriftDetected', `plan ${plan.metadata.name} failed`),
        },
        { last_error: message, transient_failure_count: count },
      );
      return {
        planPatch: failedPatch(plan, report.error.reason, message, now),
        status: orNull(policy, status),
        // A permanent failure is looked at again shortly, once the plan's Failed phase has reached the
        // planner: that pass holds the retry (`PlanRetryDeferred`, keeping this `last_error`) until the
        // retry window ends, so the reason settles there instead of staying on the first attempt's.
        requeueAfterSeconds: transient
          ? transientBackoffSeconds(count, input.jitter)
          : Math.min(interval, FAILED_RECHECK_SECONDS),
      };
    }
    case 'refused':
      return afterRefusal(input, interval);
    default: {
      const unreachable: never = report;
      return unreachable;
    }
  }
}

function afterRefusal(input: AfterExecutionInput, interval: number): AfterExecutionDecision {
  const { policy, plan, now } = input;
  if (input.report.kind !== 'refused') throw new Error('afterRefusal needs a refusal');
  const verdict = input.report.verdict;
  switch (verdict.kind) {
    case 'skip':
      return { planPatch: null, status: null, requeueAfterSeconds: interval };
    case 'superseded': {
      const cause =
        verdict.reason === 'TargetChanged' || verdict.reason === 'TargetIdentityAppeared'
          ? ({ kind: 'TargetIdentity', reason: verdict.reason, message: verdict.message } as const)
          : ({ kind: 'EffectsChanged' } as const);
      return { planPatch: supersedePatch(plan, cause, now), status: null, requeueAfterSeconds: 0 };
    }
    case 'fail_closed': {
      const message = redactSecrets(`${verdict.reason}: ${verdict.message}; the plan was not executed`);
      const status = composeStatus(
        policy,
        now,
        {
          Ready: cond('False', verdict.reason, message),
          Degraded: cond('True', verdict.reason, message),
          TargetIdentityBlocked: cond('True', verdict.reason, message),
          Drifted: cond('True', 'DriftDetected', `plan ${plan.metadata.name} was not executed`),
        },
        { last_error: message, transient_failure_count: 0 },
      );
      return {
        planPatch: failedPatch(plan, verdict.reason, message, now),
        status: orNull(policy, status),
        requeueAfterSeconds: interval,
      };
    }
    default: {
      const unreachable: never = verdict;
      return unreachable;
    }
  }
}
