// The planner's decision table for one PostgresPolicy event: gate (interval, suspend, conflict), then,
// given the inspect+plan outcome, which plan to create, keep, supersede, reject or execute, and the status.

import type { ConflictVerdict } from './conflict.js';
import { parseInterval, DEFAULT_INTERVAL_SECONDS } from './interval.js';
import type { PlanningOutcome } from './outcome.js';
import { isOwnedBy, type DecisionAuthentication } from './plan-builder.js';
import { composeStatus, cond } from './policy-status.js';
import { redactSecrets } from './redact.js';
import {
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type PostgresPolicy,
  type PostgresPolicyPlan,
} from './resources.js';
import {
  type LifecycleSettings,
  DEFAULT_LIFECYCLE_SETTINGS,
  type ReconcileDecision,
  type Ctx,
  finish,
  failureDecision,
} from './decision-context.js';
import { decideComputed } from './decide-computed.js';

/** What to do before any database work. */
export type Gate =
  | { readonly kind: 'inspect'; readonly intervalSeconds: number }
  | { readonly kind: 'invalid_interval'; readonly message: string }
  | { readonly kind: 'suspended'; readonly intervalSeconds: number }
  | { readonly kind: 'conflict'; readonly intervalSeconds: number; readonly message: string };

/**
 * Gates in the spec's order: interval validity, suspend, then conflicts with earlier policies. Only
 * `inspect` leads to a snapshot request.
 */
export function reconcileGate(policy: PostgresPolicy, conflict: ConflictVerdict): Gate {
  const interval = parseInterval(policy.spec.interval);
  if (!interval.ok) return { kind: 'invalid_interval', message: interval.message };
  if (policy.spec.suspend === true) return { kind: 'suspended', intervalSeconds: interval.seconds };
  if (conflict.kind === 'conflict') {
    return { kind: 'conflict', intervalSeconds: interval.seconds, message: conflict.message };
  }
  return { kind: 'inspect', intervalSeconds: interval.seconds };
}

/** Everything the decision needs; `outcome` is only read when the gate says `inspect`. */
export interface ReconcileInput {
  readonly policy: PostgresPolicy;
  /**
   * The namespace's plans, or at least the policy's own and its candidates' (filtered here to those the
   * policy controls, by UID); with only those, `planNameTaken` answers for the rest of the namespace.
   */
  readonly plans: readonly PostgresPolicyPlan[];
  /** Whether a plan of the namespace not in `plans` has the name: a new plan's name must be free. */
  readonly planNameTaken?: (name: string) => boolean;
  readonly conflict: ConflictVerdict;
  readonly outcome: PlanningOutcome | null;
  /** RFC 3339 UTC. */
  readonly now: string;
  /** Uniform draw in [0, 1) for backoff jitter. */
  readonly jitter: number;
  readonly settings?: LifecycleSettings;
  /**
   * A merged candidate's approved plan (candidates/promotion.ts) handed over as the policy's current plan,
   * and the policy's previous content digest, kept on the status until the promotion converged.
   */
  readonly promoted?: { readonly plan: PostgresPolicyPlan; readonly previousContentDigest: string | null };
  /** Whether decisions are authenticated (ADR 0026): the reason on undecided manual plans. */
  readonly decisions?: DecisionAuthentication;
  /** The plan whose Applied result this pass verifies: the pass right after it (decide-routes.ts `converged`). */
  readonly verifying?: string;
}

/** Decides one reconcile. Pure: the same input always yields the same steps. */
export function decideReconcile(input: ReconcileInput): ReconcileDecision {
  if (input.promoted === undefined) return decideOnce(input, false);
  const held = decideOnce(input, true);
  // Converged without running it: nothing is in flight, the new content is stamped now.
  return held.kind === 'reconciled' ? decideOnce(input, false) : held;
}

function decideOnce(input: ReconcileInput, hold: boolean): ReconcileDecision {
  const { policy, promoted } = input;
  const settings = input.settings ?? DEFAULT_LIFECYCLE_SETTINGS;
  const own = input.plans.filter((p) => isOwnedBy(p, policy));
  const owned =
    promoted === undefined
      ? own
      : [promoted.plan, ...own.filter((p) => p.metadata.name !== promoted.plan.metadata.name)];
  const annotation = policy.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  const gate = reconcileGate(policy, input.conflict);
  const ctx: Ctx = {
    policy,
    now: input.now,
    jitter: input.jitter,
    settings,
    owned,
    allNames: input.plans.map((p) => p.metadata.name),
    ...(input.planNameTaken === undefined ? {} : { nameTaken: input.planNameTaken }),
    intervalSeconds: gate.kind === 'invalid_interval' ? DEFAULT_INTERVAL_SECONDS : gate.intervalSeconds,
    forced: annotation !== undefined && annotation !== policy.status?.lastHandledReconcileAt,
    ...(promoted === undefined ? {} : { preferredPlan: promoted.plan.metadata.name }),
    ...(promoted !== undefined && hold ? { contentDigestHold: promoted.previousContentDigest } : {}),
    ...(input.decisions === undefined ? {} : { decisions: input.decisions }),
    ...(input.verifying === undefined ? {} : { verifying: input.verifying }),
  };
  switch (gate.kind) {
    case 'invalid_interval':
      return failureDecision(ctx, 'invalid_spec', {
        class: 'permanent',
        reason: 'InvalidSpec',
        message: gate.message,
      });
    case 'suspended': {
      const status = composeStatus(
        policy,
        ctx.now,
        {
          Ready: cond('False', 'Suspended', 'spec.suspend is true; reconciliation is suspended'),
          Paused: cond('True', 'Suspended', 'spec.suspend is true; reconciliation is suspended'),
        },
        { last_error: null, transient_failure_count: 0 },
      );
      return finish(ctx, 'suspended', [], status, [], ctx.intervalSeconds);
    }
    case 'conflict':
      return failureDecision(
        ctx,
        'conflict',
        { class: 'permanent', reason: 'ConflictingPolicy', message: gate.message },
        { Conflict: cond('True', 'ConflictingPolicy', redactSecrets(gate.message)) },
      );
    case 'inspect':
      break;
    default: {
      const unreachable: never = gate;
      return unreachable;
    }
  }
  const outcome = input.outcome;
  if (outcome === null) {
    return failureDecision(ctx, 'failed', {
      class: 'transient',
      reason: 'DatabaseInspectionFailed',
      message: 'no inspection result was available',
    });
  }
  if (outcome.kind === 'failed') return failureDecision(ctx, 'failed', outcome.error);
  return decideComputed(ctx, outcome.plan);
}

export {
  DEFAULT_LIFECYCLE_SETTINGS,
  executionRequest,
  type DecisionKind,
  type LifecycleSettings,
  type ReconcileDecision,
} from './decision-context.js';
