// Shared state and status helpers of one reconcile decision: settings, the decision shape, and how a
// decision is finished (status write skipped when unchanged, retention appended) or failed.

import { transientBackoffSeconds } from './backoff.js';
import type { ComputedPlan, ReconcileError } from './outcome.js';
import { failedPatch, supersedePatch, type SupersedeCause } from './plan-patches.js';
import { composeStatus, cond, sameStatus, type OutcomeConditions } from './policy-status.js';
import type { DecisionAuthentication } from './plan-builder.js';
import { redactSecrets } from './redact.js';
import {
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicyStatus,
} from './resources.js';
import { DEFAULT_RETENTION, selectPlansForDeletion, type RetentionSettings } from './retention.js';
import type { ExecutionRequest, ReconcileStep } from './steps.js';

/** Tunables of the lifecycle (planner configuration). */
export interface LifecycleSettings {
  readonly retention: RetentionSettings;
  /** A plan with the same effects that failed less than this long ago is not re-planned (no hot retry loop). */
  readonly failedRetryWindowSeconds: number;
  /** An Applying plan with no executor report for this long is marked Failed (executor lost mid-apply). */
  readonly stuckApplyingSeconds: number;
}

/** 120 s retry window, 10 min stuck-Applying timeout, default retention. */
export const DEFAULT_LIFECYCLE_SETTINGS: LifecycleSettings = {
  retention: DEFAULT_RETENTION,
  failedRetryWindowSeconds: 120,
  stuckApplyingSeconds: 600,
};

/** Outcome labels (for logs, metrics and tests). */
export type DecisionKind =
  | 'suspended'
  | 'conflict'
  | 'invalid_spec'
  | 'failed'
  | 'identity_blocked'
  | 'blocked'
  | 'applying'
  | 'reconciled'
  | 'observed'
  | 'awaiting_approval'
  | 'execution_requested'
  | 'rejected'
  | 'rejection_hold'
  | 'retry_deferred'
  | 'owner_transfer_blocked'
  | 'stale_snapshot';

/** The decision: ordered steps, the status they end in, and when to look again. */
export interface ReconcileDecision {
  readonly kind: DecisionKind;
  readonly steps: readonly ReconcileStep[];
  /** The policy status after this reconcile (its write is a step unless unchanged). */
  readonly status: PostgresPolicyStatus;
  readonly requeueAfterSeconds: number;
}

/** Ready message of a policy with nothing to apply. */
export const NOTHING_TO_APPLY = 'No changes needed';

/** Milliseconds of an RFC 3339 string, or null. */
export function toMillis(iso: string | null | undefined): number | null {
  if (iso === null || iso === undefined) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/** Newest plan first (creation time, then name). */
export function newestFirst(a: PostgresPolicyPlan, b: PostgresPolicyPlan): number {
  const ta = toMillis(a.metadata.creationTimestamp ?? a.status?.computedAt) ?? 0;
  const tb = toMillis(b.metadata.creationTimestamp ?? b.status?.computedAt) ?? 0;
  if (ta !== tb) return tb - ta;
  return a.metadata.name < b.metadata.name ? 1 : a.metadata.name > b.metadata.name ? -1 : 0;
}

/** Same changeDigest under the same encoding: the only notion of "same effects". */
export function sameEffects(plan: PostgresPolicyPlan, computed: ComputedPlan): boolean {
  return (
    plan.status?.changeDigest === computed.changeDigest &&
    plan.status?.changeDigestEncoding === computed.changeDigestEncoding
  );
}

/**
 * The idempotent execution request for an approved plan. The key names the plan object, not just its
 * name: once retention deleted a terminal plan, a later plan with the same effects may get the same name,
 * and JetStream would drop its request as a duplicate of the old one. `computedAt` tells them apart.
 */
export function executionRequest(policy: PostgresPolicy, plan: PostgresPolicyPlan): ExecutionRequest {
  const digest = plan.status?.changeDigest ?? '';
  const computedAt = plan.status?.computedAt ?? plan.metadata.creationTimestamp ?? '';
  return {
    namespace: policy.metadata.namespace,
    policyName: policy.metadata.name,
    policyUid: policy.metadata.uid,
    planName: plan.metadata.name,
    changeDigest: digest,
    changeDigestEncoding: plan.status?.changeDigestEncoding ?? '',
    approvedIdentity: {
      physical: plan.status?.targetPhysicalIdentity ?? null,
      logical: plan.status?.targetLogicalFingerprint ?? null,
    },
    idempotencyKey: `${policy.metadata.uid}/${plan.metadata.name}/${digest}/${computedAt}`,
  };
}

/** Builder state shared by the branches of one decision. */
export interface Ctx {
  readonly policy: PostgresPolicy;
  readonly now: string;
  readonly jitter: number;
  readonly settings: LifecycleSettings;
  readonly owned: readonly PostgresPolicyPlan[];
  readonly allNames: readonly string[];
  /** Whether a plan of the namespace outside `allNames` has the name (ReconcileInput.planNameTaken). */
  readonly nameTaken?: (name: string) => boolean;
  readonly intervalSeconds: number;
  readonly forced: boolean;
  /** A promoted candidate's approved plan: the current plan whatever its age (candidates/promotion.ts). */
  readonly preferredPlan?: string;
  /** While a promotion is in flight, `content_digest` keeps the previous content (re-recognised on retry). */
  readonly contentDigestHold?: string | null;
  /** Whether decisions are authenticated (ADR 0026); undefined: not reported, pending plans are left as they are. */
  readonly decisions?: DecisionAuthentication;
  /** The plan whose Applied result this pass verifies (the pass right after the result). */
  readonly verifying?: string;
}

/** Assembles a decision: steps before the status, the status write (if changed), steps after, retention. */
export function finish(
  ctx: Ctx,
  kind: DecisionKind,
  before: readonly ReconcileStep[],
  status: PostgresPolicyStatus,
  after: readonly ReconcileStep[],
  requeueAfterSeconds: number,
): ReconcileDecision {
  const write: ReconcileStep[] = sameStatus(ctx.policy.status, status)
    ? []
    : [{ kind: 'writePolicyStatus', status }];
  const retention = selectPlansForDeletion(ctx.owned, ctx.settings.retention, ctx.now).map(
    (d): ReconcileStep => ({
      kind: 'deletePlan',
      planName: d.planName,
      configMapName: d.configMapName,
    }),
  );
  return { kind, steps: [...before, ...write, ...after, ...retention], status, requeueAfterSeconds };
}

/** A failed reconcile: Ready=False and Degraded with the reason, redacted last_error, backoff or interval. */
export function failureDecision(
  ctx: Ctx,
  kind: DecisionKind,
  error: ReconcileError,
  extra: OutcomeConditions = {},
  fields: PostgresPolicyStatus = {},
): ReconcileDecision {
  const transient = error.class === 'transient';
  const count = transient ? (ctx.policy.status?.transient_failure_count ?? 0) + 1 : 0;
  const message = redactSecrets(error.message);
  const status = composeStatus(
    ctx.policy,
    ctx.now,
    {
      Ready: cond('False', error.reason, message),
      Degraded: cond('True', error.reason, message),
      ...extra,
    },
    { change_summary: null, last_error: message, transient_failure_count: count, ...fields },
  );
  const requeue = transient ? transientBackoffSeconds(count, ctx.jitter) : ctx.intervalSeconds;
  return finish(ctx, kind, [], status, [], requeue);
}

/** Fields every successful (or planned) outcome writes from the computed plan. */
export function computedFields(ctx: Ctx, computed: ComputedPlan): PostgresPolicyStatus {
  const annotation = ctx.policy.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  return {
    managed_database_identity: computed.managedDatabaseIdentity,
    owned_roles: [...computed.ownedRoles],
    owned_schemas: [...computed.ownedSchemas],
    content_digest: ctx.contentDigestHold === undefined ? computed.contentDigest : ctx.contentDigestHold,
    plan_warnings: [...computed.warnings],
    change_summary: computed.summary,
    last_reconcile_mode: ctx.policy.spec.mode ?? 'apply',
    last_error: null,
    transient_failure_count: 0,
    ...(annotation !== undefined ? { lastHandledReconcileAt: annotation } : {}),
  };
}

/** A supersede step for one plan. */
export function supersedeStep(plan: PostgresPolicyPlan, cause: SupersedeCause, now: string): ReconcileStep {
  return {
    kind: 'patchPlanStatus',
    patch: supersedePatch(plan, cause, now),
    purpose: { kind: 'supersede', cause },
  };
}

/**
 * Marks an approved plan Failed because its approved target identity cannot be proven now (the spec's
 * "execution fails closed"); the same reason and wording the executor reports when it notices first.
 */
export function failClosedStep(
  plan: PostgresPolicyPlan,
  reason: 'PhysicalIdentityRequired' | 'TargetIdentityUnavailable',
  message: string,
  now: string,
): ReconcileStep {
  return {
    kind: 'patchPlanStatus',
    patch: failedPatch(plan, reason, `${reason}: ${message}; the plan was not executed`, now),
    purpose: { kind: 'failClosed', reason },
  };
}

/** Drifted=True/DriftDetected or False/InSync. */
export function driftedCondition(hasChanges: boolean): ReturnType<typeof cond> {
  return hasChanges
    ? cond('True', 'DriftDetected', 'the database differs from the policy')
    : cond('False', 'InSync', 'the database matches the policy');
}
