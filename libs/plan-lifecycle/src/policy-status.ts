// Composes PostgresPolicy.status for each reconcile outcome: the full managed condition set (level-
// triggered: every type we own is set or removed on each write) plus the fields that outcome touches.

import { effectiveApproval, effectiveMode } from './approval.js';
import { reconcileConditions, type DesiredCondition } from './conditions.js';
import type { PostgresPolicy, PostgresPolicyStatus } from './resources.js';

/** Condition types the planner owns on a policy, in the order they are written. */
export const POLICY_CONDITION_TYPES = [
  'Ready',
  'Reconciling',
  'Degraded',
  'Drifted',
  'Paused',
  'Conflict',
  'TargetIdentityBlocked',
  'OwnerTransferBlocked',
  'ApprovalUnset',
  'ApprovalIgnored',
  'AbsenceAssertionsIgnored',
] as const;

/** One of the policy condition types the planner owns. */
export type PolicyConditionType = (typeof POLICY_CONDITION_TYPES)[number];

/** The conditions an outcome sets; types left out are removed. */
export type OutcomeConditions = Partial<Record<PolicyConditionType, DesiredCondition>>;

/** Shorthand for a desired condition. */
export function cond(status: DesiredCondition['status'], reason: string, message: string): DesiredCondition {
  return { status, reason, message };
}

/** True when the spec is additive and asserts `ensure: absent` anywhere (those assertions are ignored). */
export function hasIgnoredAbsenceAssertions(policy: PostgresPolicy): boolean {
  const spec = policy.spec;
  if (spec.reconciliation_mode !== 'additive') return false;
  const grants = (spec.grants ?? []).some((g) => g.ensure === 'absent');
  const defaults = (spec.default_privileges ?? []).some((d) => d.grant.some((g) => g.ensure === 'absent'));
  return grants || defaults;
}

/**
 * Conditions derived from the spec alone, recomputed on every write from the object being reconciled:
 * `ApprovalUnset` (deprecated inference), `AbsenceAssertionsIgnored` (the spec's additive-mode warning),
 * and `ApprovalIgnored` for `approval: auto` in plan mode, which never self-approves.
 */
export function specConditions(policy: PostgresPolicy, additiveIgnoredAbsence: boolean): OutcomeConditions {
  const out: Partial<Record<PolicyConditionType, DesiredCondition>> = {};
  const approval = effectiveApproval(policy.spec);
  const mode = effectiveMode(policy.spec);
  if (approval.inferred) {
    out.ApprovalUnset = cond(
      'True',
      'InferredFromMode',
      `spec.approval is not set; inferred "${approval.approval}" from mode "${mode}". Set it explicitly: the inference is deprecated and a future release will reject policies without it`,
    );
  }
  if (mode === 'plan' && policy.spec.approval === 'auto') {
    out.ApprovalIgnored = cond(
      'True',
      'PlanModeRequiresDecision',
      'approval: auto is not applied in plan mode; plans wait for an Approved or Denied decision',
    );
  }
  if (additiveIgnoredAbsence || hasIgnoredAbsenceAssertions(policy)) {
    out.AbsenceAssertionsIgnored = cond(
      'True',
      'AdditiveModeNeverRevokes',
      'reconciliation_mode additive only grants: ensure: absent assertions are ignored',
    );
  }
  return out;
}

/**
 * The next status: previous fields, then `fields`, with `last_attempted_generation` set to the current
 * generation and the condition list rebuilt from `conditions` (plus the spec-derived ones).
 */
export function composeStatus(
  policy: PostgresPolicy,
  now: string,
  conditions: OutcomeConditions,
  fields: PostgresPolicyStatus,
  additiveIgnoredAbsence = false,
): PostgresPolicyStatus {
  const spec = specConditions(policy, additiveIgnoredAbsence);
  const merged: Record<string, DesiredCondition | null> = {};
  for (const type of POLICY_CONDITION_TYPES) merged[type] = conditions[type] ?? spec[type] ?? null;
  return {
    ...policy.status,
    ...fields,
    last_attempted_generation: policy.metadata.generation,
    conditions: reconcileConditions(policy.status?.conditions, merged, now),
  };
}

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== null && v !== undefined) out[key] = normalise(v);
    }
    return out;
  }
  return value;
}

/**
 * True when two statuses serialise identically once null and absent fields are treated alike (a merge
 * patch deletes null fields, so the stored copy never has them). Equal statuses are not rewritten: each
 * write bumps resourceVersion and wakes every watcher.
 */
export function sameStatus(
  a: PostgresPolicyStatus | undefined,
  b: PostgresPolicyStatus | undefined,
): boolean {
  return JSON.stringify(normalise(a ?? {})) === JSON.stringify(normalise(b ?? {}));
}

/** {@link sameStatus}'s text of each status object compared through {@link sameKeptStatus}. */
const keptTexts = new WeakMap<PostgresPolicyStatus, string>();

function keptText(status: PostgresPolicyStatus | undefined): string {
  if (status === undefined) return '{}';
  let text = keptTexts.get(status);
  if (text === undefined) {
    text = JSON.stringify(normalise(status));
    keptTexts.set(status, text);
  }
  return text;
}

/**
 * {@link sameStatus} for statuses that are never changed once built: a cached policy's, a write recorded as
 * pending. Each object's text is computed once, so a status compared on every read while a write is
 * pending (the planner's read-your-own-writes check, several times a pass) is not normalised each time.
 */
export function sameKeptStatus(
  a: PostgresPolicyStatus | undefined,
  b: PostgresPolicyStatus | undefined,
): boolean {
  return keptText(a) === keptText(b);
}

/**
 * Status to write when a reconcile starts: `Reconciling=True` only for a generation not attempted yet,
 * so retries of one generation do not each cost an extra write (which would pre-empt backoff). Null
 * when nothing needs writing.
 */
export function reconcilingStatus(policy: PostgresPolicy, now: string): PostgresPolicyStatus | null {
  if (policy.status?.last_attempted_generation === policy.metadata.generation) return null;
  const previous = policy.status?.conditions ?? [];
  const keep: OutcomeConditions = {};
  for (const c of previous) {
    if (
      c.type === 'Ready' ||
      c.type === 'Degraded' ||
      c.type === 'Conflict' ||
      c.type === 'TargetIdentityBlocked'
    ) {
      keep[c.type] = cond(c.status, c.reason ?? '', c.message ?? '');
    }
  }
  return composeStatus(
    policy,
    now,
    {
      ...keep,
      Reconciling: cond('True', 'NewGeneration', `reconciling generation ${policy.metadata.generation}`),
    },
    {},
  );
}
