// TypeScript types of the five kinds, derived with TypeBox's Static from the same nodes that emit the CRD YAML.
// Because deploy/crds is generated from those nodes (and a test checks it), these types cannot drift from it.
import type { Static } from '@sinclair/typebox';
import type {
  PostgresPolicyCandidateSpec,
  PostgresPolicyCandidateStatus,
  CandidateContent,
} from './crds/candidate.schema.js';
import type {
  EphemeralAccessPolicySpec,
  EphemeralAccessPolicyStatus,
  EphemeralAccessRequestSpec,
  EphemeralAccessRequestStatus,
  ResolvedAccess as ResolvedAccessSchema,
} from './crds/ephemeral.schema.js';
import type { PostgresPolicyPlanSpec, PostgresPolicyPlanStatus } from './crds/plan.schema.js';
import type {
  Connection as ConnectionSchema,
  PostgresPolicySpec,
  PostgresPolicyStatus,
} from './crds/postgres-policy.schema.js';
import type {
  AccessCondition as AccessConditionSchema,
  ChangeSummary as ChangeSummarySchema,
  Condition as ConditionSchema,
  Identity as IdentitySchema,
} from './crds/value-types.js';
import type { API_VERSION, Kind } from './constants.js';

/** Standard object metadata, the part this project reads and writes. */
export interface ObjectMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
  readonly ownerReferences?: readonly {
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly uid: string;
    readonly controller?: boolean;
    readonly blockOwnerDeletion?: boolean;
  }[];
}

/** A custom resource of kind K with the given spec and status. */
export interface Resource<K extends Kind, Spec, Status> {
  readonly apiVersion: typeof API_VERSION;
  readonly kind: K;
  readonly metadata: ObjectMeta;
  readonly spec: Spec;
  readonly status?: Status | null;
}

/** PostgresPolicy.spec. */
export type PostgresPolicySpec = Static<typeof PostgresPolicySpec>;
/** PostgresPolicy.status. */
export type PostgresPolicyStatus = Static<typeof PostgresPolicyStatus>;
/** PostgresPolicy.spec.connection. */
export type Connection = Static<typeof ConnectionSchema>;
/** A PostgresPolicy resource. */
export type PostgresPolicy = Resource<'PostgresPolicy', PostgresPolicySpec, PostgresPolicyStatus>;

/** PostgresPolicyCandidate.spec.content. */
export type CandidateContent = Static<typeof CandidateContent>;
/** PostgresPolicyCandidate.spec. */
export type PostgresPolicyCandidateSpec = Static<typeof PostgresPolicyCandidateSpec>;
/** PostgresPolicyCandidate.status. */
export type PostgresPolicyCandidateStatus = Static<typeof PostgresPolicyCandidateStatus>;
/** A PostgresPolicyCandidate resource. */
export type PostgresPolicyCandidate = Resource<
  'PostgresPolicyCandidate',
  PostgresPolicyCandidateSpec,
  PostgresPolicyCandidateStatus
>;

/** PostgresPolicyPlan.spec. */
export type PostgresPolicyPlanSpec = Static<typeof PostgresPolicyPlanSpec>;
/** PostgresPolicyPlan.status. */
export type PostgresPolicyPlanStatus = Static<typeof PostgresPolicyPlanStatus>;
/** A PostgresPolicyPlan resource. */
export type PostgresPolicyPlan = Resource<
  'PostgresPolicyPlan',
  PostgresPolicyPlanSpec,
  PostgresPolicyPlanStatus
>;

/** EphemeralAccessPolicy.spec. */
export type EphemeralAccessPolicySpec = Static<typeof EphemeralAccessPolicySpec>;
/** EphemeralAccessPolicy.status. */
export type EphemeralAccessPolicyStatus = Static<typeof EphemeralAccessPolicyStatus>;
/** An EphemeralAccessPolicy resource. */
export type EphemeralAccessPolicy = Resource<
  'EphemeralAccessPolicy',
  EphemeralAccessPolicySpec,
  EphemeralAccessPolicyStatus
>;

/** EphemeralAccessRequest.spec. */
export type EphemeralAccessRequestSpec = Static<typeof EphemeralAccessRequestSpec>;
/** EphemeralAccessRequest.status. */
export type EphemeralAccessRequestStatus = Static<typeof EphemeralAccessRequestStatus>;
/** EphemeralAccessRequest.status.resolvedAccess. */
export type ResolvedAccess = Static<typeof ResolvedAccessSchema>;
/** An EphemeralAccessRequest resource. */
export type EphemeralAccessRequest = Resource<
  'EphemeralAccessRequest',
  EphemeralAccessRequestSpec,
  EphemeralAccessRequestStatus
>;

/** Condition item of policy, plan and candidate status. */
export type Condition = Static<typeof ConditionSchema>;
/** Condition item of access policy and request status. */
export type AccessCondition = Static<typeof AccessConditionSchema>;
/** decidedBy / requestedBy identity. */
export type Identity = Static<typeof IdentitySchema>;
/** change_summary / changeSummary counters. */
export type ChangeSummary = Static<typeof ChangeSummarySchema>;

/** Any of the five resources, discriminated by `kind`. */
export type RolePolicyResource =
  | PostgresPolicy
  | PostgresPolicyCandidate
  | PostgresPolicyPlan
  | EphemeralAccessPolicy
  | EphemeralAccessRequest;
