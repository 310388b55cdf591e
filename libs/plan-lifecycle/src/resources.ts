// Minimal local shapes of PostgresPolicy and PostgresPolicyPlan as the spec defines them (v1alpha1).
// Stand-ins until libs/kube exports the CRD-generated types; field names are the spec's, exactly.

import type { ChangeSummary, PolicyContent, ReconciliationMode } from '@rolepolicy/policy';

/** API group/version of every rolepolicy kind (mirrors libs/kube `API_VERSION`). */
export const API_VERSION = 'rolepolicy.io/v1alpha1';

/** Annotation whose value change forces a reconcile; the handled value lands in `lastHandledReconcileAt`. */
export const RECONCILE_REQUESTED_AT_ANNOTATION = 'rolepolicy.io/reconcile-requested-at';

/** Label that exempts a terminal plan from retention. */
export const KEEP_LABEL = 'rolepolicy.io/keep';

/** Label carrying the (sanitised) owning policy name on plans and their SQL ConfigMaps; lossy, never identity. */
export const POLICY_LABEL = 'rolepolicy.io/policy';

/** Label on a SQL ConfigMap naming its plan by hash (plan names can exceed the 63-character label limit). */
export const PLAN_LABEL = 'rolepolicy.io/plan';

/** `metadata.ownerReferences[]` item. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** The object metadata the planner reads and writes. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace: string;
  /** Assigned by the API server; absent on objects the planner builds but has not created yet. */
  readonly uid?: string;
  /** Bumped by the API server on spec changes only. Absent on objects not yet created. */
  readonly generation?: number;
  /** RFC 3339, set by the API server. */
  readonly creationTimestamp?: string;
  /** Set by the API server on every write; compared only for equality (read-your-writes overlays). */
  readonly resourceVersion?: string;
  /** RFC 3339; set once deletion has started (the object is going away). */
  readonly deletionTimestamp?: string;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
}

/** Status values of a condition. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** Condition item shared by policy, plan and candidate status. */
export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string | null;
  readonly message?: string | null;
  readonly last_transition_time?: string | null;
}

/** A Secret reference in `connection.params` form. */
export interface SecretKeyRef {
  readonly name: string;
  readonly key: string;
}

/** `spec.connection.params`: every part a literal or a Secret reference. */
export interface ConnectionParams {
  readonly host?: string | null;
  readonly hostSecret?: SecretKeyRef | null;
  readonly port?: number | null;
  readonly portSecret?: SecretKeyRef | null;
  readonly dbname?: string | null;
  readonly dbnameSecret?: SecretKeyRef | null;
  readonly username?: string | null;
  readonly usernameSecret?: SecretKeyRef | null;
  readonly password?: string | null;
  readonly passwordSecret?: SecretKeyRef | null;
  readonly sslMode?: string | null;
  readonly sslModeSecret?: SecretKeyRef | null;
  readonly setRole?: string | null;
  readonly auth?: {
    readonly type: 'cloud_workload_identity';
    readonly impersonateServiceAccount?: string | null;
    readonly scope?: string | null;
  } | null;
}

/** `spec.connection`: a Secret URL or params, plus the physical-identity requirement. */
export interface ConnectionSpec {
  readonly secretRef?: { readonly name: string } | null;
  readonly secretKey?: string | null;
  readonly params?: ConnectionParams | null;
  readonly requirePhysicalIdentity?: boolean | null;
}

/** `spec.mode`. */
export type PolicyMode = 'apply' | 'observe' | 'plan';

/** `spec.approval`. */
export type ApprovalMode = 'manual' | 'auto';

/** `PostgresPolicy.spec`: the connection, the lifecycle knobs and the policy content. */
export interface PostgresPolicySpec extends PolicyContent {
  readonly connection: ConnectionSpec;
  readonly mode?: PolicyMode;
  readonly approval?: ApprovalMode | null;
  readonly interval?: string;
  readonly suspend?: boolean;
  readonly allow_schema_owner_transfers?: boolean;
}

/** `PostgresPolicy.status` (all controller-owned). */
export interface PostgresPolicyStatus {
  readonly applied_password_source_versions?: Readonly<Record<string, string>>;
  readonly change_summary?: ChangeSummary | null;
  readonly conditions?: readonly Condition[];
  readonly content_digest?: string | null;
  readonly current_plan_ref?: { readonly name: string } | null;
  readonly lastHandledReconcileAt?: string | null;
  readonly last_attempted_generation?: number | null;
  readonly last_error?: string | null;
  readonly last_reconcile_mode?: PolicyMode | null;
  readonly last_successful_reconcile_time?: string | null;
  readonly managed_database_identity?: string | null;
  readonly observed_generation?: number | null;
  readonly owned_roles?: readonly string[];
  readonly owned_schemas?: readonly string[];
  readonly plan_warnings?: readonly string[];
  readonly transient_failure_count?: number;
}

/** Metadata of an object that exists in the cluster: uid and generation are always set. */
export interface StoredObjectMeta extends ObjectMeta {
  readonly uid: string;
  readonly generation: number;
}

/** A PostgresPolicy object. */
export interface PostgresPolicy {
  readonly apiVersion?: string;
  readonly kind?: 'PostgresPolicy';
  readonly metadata: StoredObjectMeta;
  readonly spec: PostgresPolicySpec;
  readonly status?: PostgresPolicyStatus;
}

/** `PostgresPolicyPlan.status.phase`. */
export type PlanPhase =
  'Pending' | 'Approved' | 'Applying' | 'Applied' | 'Failed' | 'Superseded' | 'Rejected';

/** `decidedBy`: the identity that approved or denied a plan. */
export interface DecidedBy {
  readonly username: string;
  readonly uid?: string | null;
  readonly groups?: readonly string[];
}

/** `status.sqlRef`: the ConfigMap holding the full (redacted) SQL. */
export interface SqlRef {
  readonly name: string;
  readonly key: string;
  readonly compression?: 'gzip' | null;
}

/** `PostgresPolicyPlan.spec`. Durable policy plans carry neither `origin` nor `scope`. */
export interface PostgresPolicyPlanSpec {
  readonly managedDatabaseIdentity: string;
  readonly policyGeneration: number;
  readonly policyRef: { readonly name: string };
  readonly reconciliationMode: ReconciliationMode;
  readonly ownedRoles?: readonly string[];
  readonly ownedSchemas?: readonly string[];
  readonly origin?: {
    readonly kind: string;
    readonly name: string;
    readonly uid: string;
    readonly baseContentDigest?: string;
    readonly contentDigest?: string;
    readonly contentDigestEncoding?: string;
    readonly policyUid?: string;
  } | null;
  readonly scope?: {
    readonly bundleHash: string;
    readonly kind: string;
    readonly operation: 'Activate' | 'Revoke';
  } | null;
}

/** `PostgresPolicyPlan.status`. */
export interface PostgresPolicyPlanStatus {
  readonly phase?: PlanPhase;
  readonly conditions?: readonly Condition[];
  readonly decidedBy?: DecidedBy | null;
  readonly changeDigest?: string | null;
  readonly changeDigestEncoding?: string | null;
  readonly changeSummary?: ChangeSummary | null;
  readonly computedAt?: string | null;
  readonly appliedAt?: string | null;
  readonly applyingSince?: string | null;
  readonly failedAt?: string | null;
  readonly revalidatedAt?: string | null;
  readonly revalidatedGeneration?: number | null;
  readonly lastError?: string | null;
  readonly passwordSourceDigest?: string | null;
  readonly physicalIdentityAvailable?: boolean | null;
  readonly targetPhysicalIdentity?: string | null;
  readonly targetLogicalFingerprint?: string | null;
  readonly redactedSqlHash?: string | null;
  readonly sqlHash?: string | null;
  readonly sqlInline?: string | null;
  readonly sqlRef?: SqlRef | null;
  readonly sqlOriginalBytes?: number | null;
  readonly sqlStoredBytes?: number | null;
  readonly sqlStatements?: number | null;
  readonly sqlTruncated?: boolean;
}

/** A PostgresPolicyPlan object. */
export interface PostgresPolicyPlan {
  readonly apiVersion?: string;
  readonly kind?: 'PostgresPolicyPlan';
  readonly metadata: ObjectMeta;
  readonly spec: PostgresPolicyPlanSpec;
  readonly status?: PostgresPolicyPlanStatus;
}

/** A ConfigMap as data (the planner builds it; the gateway writes it). */
export interface ConfigMap {
  readonly apiVersion: 'v1';
  readonly kind: 'ConfigMap';
  readonly metadata: ObjectMeta;
  readonly binaryData?: Readonly<Record<string, string>>;
  readonly data?: Readonly<Record<string, string>>;
}
