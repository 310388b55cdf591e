// The scoped PostgresPolicyPlans of a request (ADR 0008): the object the scheduler creates before asking
// the executor, whether an existing one is really this request's, and its status from an executor result.
import { createHash } from 'node:crypto';
import type { EphemeralAccessRequest, PostgresPolicyPlan, ResolvedAccess } from '@rolepolicy/kube';
import { API_VERSION } from '@rolepolicy/kube';
import {
  EPHEMERAL_REQUEST_ORIGIN,
  MEMBERSHIP_BUNDLE_SCOPE,
  compareCodePoints,
  scopedPlanName,
  type ScopeOperation,
} from '@rolepolicy/policy';
import type { TargetView } from './target.js';

/** Label naming the target policy on every plan. */
export const POLICY_LABEL = 'rolepolicy.io/policy';
/** Label naming the request on its scoped plans. */
export const REQUEST_LABEL = 'rolepolicy.io/access-request';

type Json = Record<string, unknown>;

/** The name of one of a request's scoped plans (its snapshot must exist). */
export function planNameOf(request: EphemeralAccessRequest, operation: ScopeOperation): string {
  return scopedPlanName(
    { name: request.metadata.name ?? '', uid: request.metadata.uid ?? '' },
    operation,
    request.status!.resolvedAccess!.bundleHash,
  );
}

/** A label value of at most 63 characters (longer names are cut; labels only narrow lists). */
function labelValue(value: string): string {
  return value.length <= 63 ? value : value.slice(0, 63).replace(/[-_.]+$/, '');
}

/** The plan object (without status) and its initial status: phase Applying, condition Scoped=True. */
export function scopedPlanObject(
  request: EphemeralAccessRequest,
  resolved: ResolvedAccess,
  target: TargetView,
  operation: ScopeOperation,
  now: string,
): { readonly object: Json; readonly status: Json } {
  const name = planNameOf(request, operation);
  const ownedRoles = [
    ...new Set([...resolved.memberships.map((m) => m.role), ...resolved.memberships.map((m) => m.member)]),
  ].sort(compareCodePoints);
  return {
    object: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      metadata: {
        name,
        namespace: request.metadata.namespace,
        labels: {
          [POLICY_LABEL]: labelValue(target.name),
          [REQUEST_LABEL]: labelValue(request.metadata.name ?? ''),
        },
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: 'EphemeralAccessRequest',
            name: request.metadata.name,
            uid: request.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        managedDatabaseIdentity: target.managedDatabaseIdentity,
        policyGeneration: target.generation,
        policyRef: { name: target.name },
        reconciliationMode: target.reconciliationMode,
        ownedRoles,
        ownedSchemas: [],
        origin: { kind: EPHEMERAL_REQUEST_ORIGIN, name: request.metadata.name, uid: request.metadata.uid },
        scope: { kind: MEMBERSHIP_BUNDLE_SCOPE, operation, bundleHash: resolved.bundleHash },
      },
    },
    status: {
      phase: 'Applying',
      applyingSince: now,
      conditions: [{ type: 'Scoped', status: 'True', reason: operation, last_transition_time: now }],
    },
  };
}

/** Why an existing plan with the deterministic name is not this request's plan, or null when it is. */
export function foreignPlan(
  plan: PostgresPolicyPlan,
  request: EphemeralAccessRequest,
  operation: ScopeOperation,
  bundleHash: string,
): string | null {
  const owner = plan.metadata.ownerReferences?.find((o) => o.controller === true);
  const { origin, scope } = plan.spec;
  const ok =
    owner?.uid === request.metadata.uid &&
    origin?.kind === EPHEMERAL_REQUEST_ORIGIN &&
    origin.uid === request.metadata.uid &&
    scope?.kind === MEMBERSHIP_BUNDLE_SCOPE &&
    scope.operation === operation &&
    scope.bundleHash === bundleHash;
  return ok
    ? null
    : `PostgresPolicyPlan ${plan.metadata.name} exists but is not the ${operation} plan of this request and bundle`;
}

/** One membership as a request's `retainedMemberships` lists it. */
export interface RetainedMembership {
  readonly role: string;
  readonly member: string;
  readonly inherit: boolean;
}

/** The outcome fields of an executor result the plan status records. */
export interface ScopedOutcome {
  readonly outcome: 'Applied' | 'Failed' | 'Blocked';
  readonly operation: ScopeOperation;
  readonly statements: readonly string[];
  readonly reason: string;
  readonly message: string;
  /** Memberships a revoke kept because the base policy declares them. */
  readonly retained?: readonly RetainedMembership[];
}

/** How a revoke plan's Applied condition message begins when it records the memberships it kept. */
const RETAINED_PREFIX = 'kept because the base policy declares them: ';

/**
 * The message of a revoke plan's Applied condition: the memberships the executor kept, as JSON after a fixed
 * prefix, so the request's `retainedMemberships` can be re-derived from the plan (a scheduler that dies
 * between the result and the request's final write loses nothing). Role names carry no secret.
 */
export function retainedMessage(retained: readonly RetainedMembership[]): string {
  const list = retained.map(({ role, member, inherit }) => ({ role, member, inherit }));
  return `${RETAINED_PREFIX}${JSON.stringify(list)}`;
}

/**
 * The memberships a revoke plan recorded as kept ([] when it kept none), or undefined when the plan is not
 * an Applied revoke plan with that record (written before the record existed, or not applied yet).
 */
export function retainedOfPlan(plan: PostgresPolicyPlan | undefined): RetainedMembership[] | undefined {
  if (plan?.status?.phase !== 'Applied') return undefined;
  const applied = (plan.status.conditions as { type?: string; message?: string }[] | undefined)?.find(
    (c) => c.type === 'Applied',
  );
  const message = applied?.message;
  if (message === undefined || !message.startsWith(RETAINED_PREFIX)) return undefined;
  try {
    const parsed = JSON.parse(message.slice(RETAINED_PREFIX.length)) as unknown;
    if (!Array.isArray(parsed)) return undefined;
    const valid = parsed.every(
      (m: unknown) =>
        typeof m === 'object' &&
        m !== null &&
        typeof (m as RetainedMembership).role === 'string' &&
        typeof (m as RetainedMembership).member === 'string' &&
        typeof (m as RetainedMembership).inherit === 'boolean',
    );
    return valid
      ? (parsed as RetainedMembership[]).map(({ role, member, inherit }) => ({ role, member, inherit }))
      : undefined;
  } catch {
    return undefined;
  }
}

const MAX_ERROR = 4096;

/** Cuts an error text to the 4096 characters of `lastError`. */
export function errorText(text: string): string {
  return text.length <= MAX_ERROR ? text : `${text.slice(0, MAX_ERROR - 1)}…`;
}

/**
 * The plan status patch of a result (merge patch), or null for Blocked (the plan stays Applying and is
 * asked again later). The SQL is membership grants and revokes only: role names, never a secret.
 */
export function planStatusOfResult(result: ScopedOutcome, now: string): Json | null {
  // Blocked: asked again later. AlreadyApplied: the plan already records what ran; keep that record.
  if (result.outcome === 'Blocked' || result.reason === 'AlreadyApplied') return null;
  const sql = result.statements.length === 0 ? '' : `${result.statements.join(';\n')};\n`;
  const scoped = { type: 'Scoped', status: 'True', reason: result.operation, last_transition_time: now };
  if (result.outcome === 'Applied') {
    return {
      phase: 'Applied',
      appliedAt: now,
      sqlInline: sql,
      sqlHash: createHash('sha256').update(sql).digest('hex'),
      sqlStatements: result.statements.length,
      lastError: null,
      conditions: [
        scoped,
        {
          type: 'Applied',
          status: 'True',
          reason: result.reason,
          ...(result.operation === 'Revoke' ? { message: retainedMessage(result.retained ?? []) } : {}),
          last_transition_time: now,
        },
      ],
    };
  }
  return {
    phase: 'Failed',
    failedAt: now,
    lastError: errorText(`${result.reason}: ${result.message}`),
    conditions: [
      scoped,
      {
        type: 'Applied',
        status: 'False',
        reason: result.reason,
        message: errorText(result.message),
        last_transition_time: now,
      },
    ],
  };
}
