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

/** The outcome fields of an executor result the plan status records. */
export interface ScopedOutcome {
  readonly outcome: 'Applied' | 'Failed' | 'Blocked';
  readonly operation: ScopeOperation;
  readonly statements: readonly string[];
  readonly reason: string;
  readonly message: string;
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
  if (result.outcome === 'Blocked') return null;
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
        { type: 'Applied', status: 'True', reason: result.reason, last_transition_time: now },
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
