// Builds a PostgresPolicyPlan (and its SQL ConfigMap when needed) from a computed plan: deterministic
// name, ownerReference to the policy, every spec and status field. Data only; the gateway creates them.

import type { ConditionReason } from './condition-reasons.js';
import { AUTO_APPROVER } from './approval.js';
import type { ComputedPlan } from './outcome.js';
import {
  API_VERSION,
  PLAN_LABEL,
  POLICY_LABEL,
  type ConfigMap,
  type Condition,
  type OwnerReference,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicyPlanStatus,
} from './resources.js';
import { sha256Hex, storeSql, type StoredSql } from './sql-storage.js';

/** Longest Kubernetes object name. */
export const MAX_NAME_LENGTH = 253;
/** Plan names leave room for the `-sql` suffix of their ConfigMap. */
export const MAX_PLAN_NAME_LENGTH = MAX_NAME_LENGTH - '-sql'.length;
/** Hex characters of the digest used in a plan name: enough to tell plans apart at a glance. */
export const PLAN_NAME_DIGEST_CHARS = 12;
/** Longest label value. */
export const MAX_LABEL_VALUE_LENGTH = 63;

/** Condition reason recorded when the planner approves under `approval: auto`. */
export const AUTO_APPROVED_REASON = 'AutoApproved' satisfies ConditionReason;

/**
 * Whether the API server authenticates decisions (the k8s-gateway reads it from the cluster, ADR 0026), with
 * the gateway's sentence saying why.
 */
export interface DecisionAuthentication {
  readonly authenticated: boolean;
  readonly detail: string;
}

/**
 * The undecided `Approved` condition of a manual plan: `PendingApproval`, or `ApprovalUnauthenticated` while
 * no admission policy makes `decidedBy` the caller's own (docs/approvals.md). Unknown (undefined): the former.
 */
export function pendingApprovalCondition(decisions: DecisionAuthentication | undefined): {
  readonly status: 'False';
  readonly reason: string;
  readonly message: string;
} {
  if (decisions === undefined || decisions.authenticated) {
    return { status: 'False', reason: 'PendingApproval', message: 'awaiting an Approved or Denied decision' };
  }
  return {
    status: 'False',
    reason: 'ApprovalUnauthenticated',
    message:
      'awaiting an Approved or Denied decision; decisions are unauthenticated: no admission policy makes decidedBy the decider’s own (docs/approvals.md)',
  };
}

/** The controller ownerReference that ties plans and ConfigMaps to their policy (GC and identity). */
export function policyOwnerReference(policy: PostgresPolicy): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    name: policy.metadata.name,
    uid: policy.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * True when `plan` is a durable plan controlled by `policy` (by UID: names and labels are lossy or
 * reusable). Scoped plans (`spec.scope`, ephemeral access) belong to their request's lifecycle: the
 * planner never supersedes, retains, deletes or points `current_plan_ref` at one, whoever owns it.
 */
export function isOwnedBy(plan: PostgresPolicyPlan, policy: PostgresPolicy): boolean {
  if (plan.spec.scope != null) return false;
  return (plan.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === 'PostgresPolicy' && ref.uid === policy.metadata.uid,
  );
}

/** A label value (<= 63 chars, alphanumeric at both ends) derived from a DNS-subdomain name. */
export function labelValue(name: string): string {
  return name
    .slice(0, MAX_LABEL_VALUE_LENGTH)
    .replace(/[^A-Za-z0-9]+$/, '')
    .replace(/^[^A-Za-z0-9]+/, '');
}

function digestHex(changeDigest: string): string {
  const hex = changeDigest.includes(':') ? changeDigest.slice(changeDigest.indexOf(':') + 1) : changeDigest;
  return hex
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, PLAN_NAME_DIGEST_CHARS);
}

/**
 * `<policy>-<12 hex of changeDigest>`, then `-2`, `-3`, ... when that name is taken by an earlier plan
 * with the same effects (drift repaired twice, a failed plan re-planned). Deterministic from the inputs,
 * so two planner attempts for one event propose the same name and the second create is a harmless 409.
 * The policy prefix is cut so the name stays within 249 characters (room for `-sql`).
 */
export function planName(
  policyName: string,
  changeDigest: string,
  existingNames: readonly string[],
  nameTaken: (name: string) => boolean = () => false,
): string {
  const known = new Set(existingNames);
  const taken = { has: (name: string): boolean => known.has(name) || nameTaken(name) };
  const hex = digestHex(changeDigest);
  for (let seq = 1; ; seq += 1) {
    const suffix = seq === 1 ? `-${hex}` : `-${hex}-${seq}`;
    const prefix = policyName.slice(0, MAX_PLAN_NAME_LENGTH - suffix.length).replace(/[-.]+$/, '');
    const candidate = `${prefix}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Inputs of {@link buildPlan}. */
export interface BuildPlanInput {
  readonly policy: PostgresPolicy;
  readonly computed: ComputedPlan;
  /** Names of plans in the namespace the new name must not take (at least the policy's own). */
  readonly existingPlanNames: readonly string[];
  /**
   * Whether any other plan of the namespace has the name (a lookup by name, so the caller need not list
   * the whole namespace); default: only `existingPlanNames` are taken.
   */
  readonly nameTaken?: (name: string) => boolean;
  readonly now: string;
  /** Record `Approved=True/AutoApproved` and the planner's decidedBy at creation (apply + auto). */
  readonly autoApprove: boolean;
  /** Whether decisions are authenticated: the reason of a manual plan's pending `Approved` condition. */
  readonly decisions?: DecisionAuthentication;
  /** Storage thresholds; defaults to the production ones. */
  readonly sqlLimits?: { readonly inlineMaxBytes: number; readonly configMapMaxGzipBytes: number };
}

/** A plan ready to create, and the ConfigMap to create before it (when the SQL is stored out of line). */
export interface BuiltPlan {
  readonly plan: PostgresPolicyPlan;
  readonly configMap: ConfigMap | null;
}

function computedConditions(
  stored: StoredSql,
  autoApprove: boolean,
  decisions: DecisionAuthentication | undefined,
  now: string,
): readonly Condition[] {
  const computed: Condition = {
    type: 'Computed',
    status: 'True',
    reason: 'PlanComputed',
    message: stored.sqlTruncated
      ? 'plan computed; the SQL preview was truncated to fit object size limits'
      : 'plan computed',
    last_transition_time: now,
  };
  const approved: Condition = autoApprove
    ? {
        type: 'Approved',
        status: 'True',
        reason: AUTO_APPROVED_REASON,
        message: 'approved automatically (approval: auto)',
        last_transition_time: now,
      }
    : { type: 'Approved', ...pendingApprovalCondition(decisions), last_transition_time: now };
  return [computed, approved];
}

/** Builds the plan object with spec, labels, ownerReference and full status (and its ConfigMap if any). */
export function buildPlan(input: BuildPlanInput): BuiltPlan {
  const { policy, computed, now } = input;
  const name = planName(
    policy.metadata.name,
    computed.changeDigest,
    input.existingPlanNames,
    input.nameTaken,
  );
  const stored = storeSql(computed.sql.redactedSql, input.sqlLimits);
  const owner = policyOwnerReference(policy);
  const configMapName = `${name}-sql`;
  const sqlFields: Pick<PostgresPolicyPlanStatus, 'sqlInline' | 'sqlRef'> =
    stored.storage.kind === 'configmap'
      ? { sqlInline: null, sqlRef: { name: configMapName, key: stored.storage.key, compression: 'gzip' } }
      : { sqlInline: stored.storage.sqlInline, sqlRef: null };
  const status: PostgresPolicyPlanStatus = {
    phase: input.autoApprove ? 'Approved' : 'Pending',
    conditions: computedConditions(stored, input.autoApprove, input.decisions, now),
    decidedBy: input.autoApprove ? AUTO_APPROVER : null,
    changeDigest: computed.changeDigest,
    changeDigestEncoding: computed.changeDigestEncoding,
    changeSummary: computed.summary,
    computedAt: now,
    revalidatedAt: now,
    revalidatedGeneration: policy.metadata.generation,
    appliedAt: null,
    applyingSince: null,
    failedAt: null,
    lastError: null,
    passwordSourceDigest: computed.passwordSourceDigest,
    physicalIdentityAvailable: computed.identity.physical !== null,
    targetPhysicalIdentity: computed.identity.physical,
    targetLogicalFingerprint: computed.identity.logicalFingerprint,
    sqlHash: computed.sql.sqlHash,
    redactedSqlHash: stored.redactedSqlHash,
    ...sqlFields,
    sqlOriginalBytes: stored.sqlOriginalBytes,
    sqlStoredBytes: stored.sqlStoredBytes,
    sqlStatements: computed.sql.statementCount,
    sqlTruncated: stored.sqlTruncated,
  };
  const plan: PostgresPolicyPlan = {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicyPlan',
    metadata: {
      name,
      namespace: policy.metadata.namespace,
      labels: { [POLICY_LABEL]: labelValue(policy.metadata.name) },
      ownerReferences: [owner],
    },
    spec: {
      managedDatabaseIdentity: computed.managedDatabaseIdentity,
      policyGeneration: policy.metadata.generation,
      policyRef: { name: policy.metadata.name },
      reconciliationMode: computed.reconciliationMode,
      ownedRoles: [...computed.ownedRoles],
      ownedSchemas: [...computed.ownedSchemas],
    },
    status,
  };
  const configMap: ConfigMap | null =
    stored.storage.kind === 'configmap'
      ? {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: configMapName,
            namespace: policy.metadata.namespace,
            labels: {
              [POLICY_LABEL]: labelValue(policy.metadata.name),
              [PLAN_LABEL]: sha256Hex(name).slice(0, 32),
            },
            annotations: {
              'rolepolicy.io/compression': 'gzip',
              'rolepolicy.io/redacted-sql-hash': stored.redactedSqlHash,
              'rolepolicy.io/sql-original-bytes': String(stored.sqlOriginalBytes),
              'rolepolicy.io/sql-stored-bytes': String(stored.sqlStoredBytes),
            },
            ownerReferences: [owner],
          },
          binaryData: { [stored.storage.key]: stored.storage.gzipBase64 },
        }
      : null;
  return { plan, configMap };
}
