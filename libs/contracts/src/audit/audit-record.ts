// The audit trail's one schema (`rolepolicy.audit` v1): every access decision and every change to who can do
// what, as a record that outlives Kubernetes Events. Identities only (namespace, name, uid, digest, role
// names, database): no field can hold a password, a verifier, a URL with credentials or an SQL literal.
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { defineContract, validatePayload, type DecodeResult, type MessageContract } from '../contract.js';

/** Version of the record schema; a change that is not additive adds version 2 beside it (docs/audit.md). */
export const AUDIT_SCHEMA_VERSION = 1;

/** Logger name of the stdout stream (`context`) and of the OpenTelemetry logger (instrumentation scope). */
export const AUDIT_LOGGER = 'audit';
export const AUDIT_OTEL_LOGGER = 'rolepolicy.audit';

/** Every event of the trail, in the order docs/audit.md lists them. */
export const AUDIT_EVENTS = [
  'plan.approved',
  'plan.denied',
  'plan.applied',
  'plan.failed',
  'access.requested',
  'access.approved',
  'access.activated',
  'access.expired',
  'access.revoking',
  'access.revoked',
  'access.ended',
  'access.denied',
  'access.approval_expired',
  'access.cancelled',
  'access.failed',
  'membership.granted',
  'membership.revoked',
] as const;

/** One event name. */
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

/** The services that write audit records. */
export const AUDIT_SOURCES = ['planner', 'executor', 'access-scheduler', 'k8s-gateway'] as const;

const Name = Type.String({ minLength: 1, maxLength: 253 });
const Uid = Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()]);
const RoleName = Type.String({ minLength: 1, maxLength: 128 });
const Digest = Type.String({ minLength: 1, maxLength: 128 });
const Timestamp = Type.String({ format: 'date-time' });
const Reason = Type.String({ minLength: 1, maxLength: 128 });

const closed = <P extends TProperties>(properties: P, description?: string): TObject<P> =>
  Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });

/** The Kubernetes object a record is about. */
export const AuditObject = closed({
  kind: Type.String({ minLength: 1, maxLength: 63 }),
  namespace: Name,
  name: Name,
  uid: Uid,
});

/** A named object in the record's namespace (policy, access policy, plan). */
export const AuditRef = closed({ name: Name, uid: Uid });

/** An identity as the API server authenticated it and admission bound it to `decidedBy` (ADR 0026). */
export const AuditIdentity = closed({
  username: Type.String({ minLength: 1, maxLength: 512 }),
  uid: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  groups: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 64 }),
});

/** The database the statements ran in: server address and database name, never credentials. */
export const AuditDatabase = closed({
  host: Type.String({ minLength: 1, maxLength: 255 }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  /** The connection reference the plan's digest binds (`namespace/secret/key` or the params form). */
  target: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]),
});

/** The replica that did it (`HOSTNAME`, the pod name in a cluster). */
export const AuditInstance = Type.String({ minLength: 1, maxLength: 253 });

/** A membership edge: `member` is a member of `role`. */
export const AuditMembership = closed({
  role: RoleName,
  member: RoleName,
  admin: Type.Union([Type.Boolean(), Type.Null()]),
  inherit: Type.Union([Type.Boolean(), Type.Null()]),
});

/** A privilege granted or revoked on an object (names only). */
export const AuditPrivilegeChange = closed({
  op: Type.Union([Type.Literal('grant'), Type.Literal('revoke')]),
  role: RoleName,
  privileges: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }),
  objectType: Type.String({ minLength: 1, maxLength: 64 }),
  schema: Type.Union([Type.String({ maxLength: 128 }), Type.Null()]),
  object: Type.Union([Type.String({ maxLength: 512 }), Type.Null()]),
});

/** The plan's change summary (the spec's counters). */
export const AuditChangeSummary = closed(
  Object.fromEntries(
    [
      'default_privileges_revoked',
      'default_privileges_set',
      'grants_added',
      'grants_revoked',
      'members_added',
      'members_removed',
      'passwords_set',
      'roles_altered',
      'roles_created',
      'roles_dropped',
      'schema_owners_altered',
      'schemas_created',
      'sessions_terminated',
      'total',
    ].map((k) => [k, Type.Integer({ minimum: 0 })]),
  ),
);

/** Up to this many entries per list; `truncated` says when a plan had more (the plan's SQL has them all). */
export const AUDIT_LIST_LIMIT = 500;

/** Who can do what after a plan: role and membership changes by name, privilege changes by object. */
export const AuditAccessChanges = closed({
  rolesCreated: Type.Array(RoleName, { maxItems: AUDIT_LIST_LIMIT }),
  rolesDropped: Type.Array(RoleName, { maxItems: AUDIT_LIST_LIMIT }),
  /** Roles whose password was set (the role name only; the source version and the verifier are not here). */
  passwordsSet: Type.Array(RoleName, { maxItems: AUDIT_LIST_LIMIT }),
  membershipsGranted: Type.Array(AuditMembership, { maxItems: AUDIT_LIST_LIMIT }),
  membershipsRevoked: Type.Array(AuditMembership, { maxItems: AUDIT_LIST_LIMIT }),
  privileges: Type.Array(AuditPrivilegeChange, { maxItems: AUDIT_LIST_LIMIT }),
  truncated: Type.Boolean(),
});

/** Fields every record has. */
const envelope = {
  /** `rolepolicy.audit`, so a consumer reading a mixed stream picks records out by one field. */
  schema: Type.Literal('rolepolicy.audit'),
  v: Type.Literal(AUDIT_SCHEMA_VERSION),
  /** Dedupe key: the same event observed twice (redelivery, a new leader) has the same id (docs/audit.md). */
  id: Type.String({ pattern: '^[0-9a-f]{32}$' }),
  at: Timestamp,
  source: Type.Union(AUDIT_SOURCES.map((s) => Type.Literal(s))),
  object: AuditObject,
};

function record<E extends AuditEvent, P extends TProperties>(event: E, properties: P) {
  return closed({ ...envelope, event: Type.Literal(event), ...properties });
}

const planFields = {
  policy: AuditRef,
  digest: Type.Union([Digest, Type.Null()]),
};

/** A person (or the planner under `approval: auto`) approved or denied a plan. */
const planDecisionFields = {
  ...planFields,
  decidedBy: Type.Union([AuditIdentity, Type.Null()]),
  /** True when the planner approved under `approval: auto`. */
  automatic: Type.Boolean(),
  /** The decision condition's reason (e.g. `ApprovedByUser`, `AutoApproved`). */
  reason: Type.Union([Reason, Type.Null()]),
  summary: Type.Union([AuditChangeSummary, Type.Null()]),
};

export const PlanApprovedRecord = record('plan.approved', planDecisionFields);
export const PlanDeniedRecord = record('plan.denied', planDecisionFields);

/** The executor committed a plan's statements. */
export const PlanAppliedRecord = record('plan.applied', {
  ...planFields,
  summary: AuditChangeSummary,
  changes: AuditAccessChanges,
  statementCount: Type.Integer({ minimum: 0 }),
  database: AuditDatabase,
  executor: AuditInstance,
});

/** An approved plan was not applied: the transaction failed or rolled back, or the plan failed closed. */
export const PlanFailedRecord = record('plan.failed', {
  ...planFields,
  reason: Reason,
  errorClass: Type.Union([Type.Literal('transient'), Type.Literal('permanent'), Type.Null()]),
  sqlState: Type.Union([Type.String({ pattern: '^[0-9A-Z]{5}$' }), Type.Null()]),
  database: Type.Union([AuditDatabase, Type.Null()]),
  executor: Type.Union([AuditInstance, Type.Null()]),
});

/** A phase change of an EphemeralAccessRequest (the access-scheduler's state machine). */
const accessFields = {
  accessPolicy: AuditRef,
  targetPolicyUid: Uid,
  bundleHash: Type.Union([Digest, Type.Null()]),
  subject: RoleName,
  requestedBy: AuditIdentity,
  decidedBy: Type.Union([AuditIdentity, Type.Null()]),
  /** The bundle the request resolved to (null before it resolved). */
  memberships: Type.Union([Type.Array(AuditMembership, { maxItems: 64 }), Type.Null()]),
  grantedDuration: Type.Union([Type.String({ maxLength: 64 }), Type.Null()]),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
  fromPhase: Type.String({ minLength: 1, maxLength: 32 }),
  toPhase: Type.String({ minLength: 1, maxLength: 32 }),
  reason: Reason,
  message: Type.String({ maxLength: 1024 }),
};

export const AccessRequestedRecord = record('access.requested', accessFields);
export const AccessApprovedRecord = record('access.approved', accessFields);
export const AccessActivatedRecord = record('access.activated', accessFields);
export const AccessExpiredRecord = record('access.expired', accessFields);
export const AccessRevokingRecord = record('access.revoking', accessFields);
export const AccessRevokedRecord = record('access.revoked', accessFields);
export const AccessEndedRecord = record('access.ended', accessFields);
export const AccessDeniedRecord = record('access.denied', accessFields);
export const AccessApprovalExpiredRecord = record('access.approval_expired', accessFields);
export const AccessCancelledRecord = record('access.cancelled', accessFields);
export const AccessFailedRecord = record('access.failed', accessFields);

/** The executor committed an ephemeral access plan (Activate, Revoke) or a sweep of stray edges. */
const membershipFields = {
  operation: Type.Union([Type.Literal('Activate'), Type.Literal('Revoke'), Type.Literal('Sweep')]),
  request: Type.Union([AuditRef, Type.Null()]),
  plan: Type.Union([AuditRef, Type.Null()]),
  policy: AuditRef,
  bundleHash: Type.Union([Digest, Type.Null()]),
  memberships: Type.Array(AuditMembership, { minItems: 1, maxItems: AUDIT_LIST_LIMIT }),
  database: AuditDatabase,
  executor: AuditInstance,
};

export const MembershipGrantedRecord = record('membership.granted', membershipFields);
export const MembershipRevokedRecord = record('membership.revoked', membershipFields);

/** Version 1 of an audit record: one of the events above. */
export const AuditRecordV1 = Type.Union([
  PlanApprovedRecord,
  PlanDeniedRecord,
  PlanAppliedRecord,
  PlanFailedRecord,
  AccessRequestedRecord,
  AccessApprovedRecord,
  AccessActivatedRecord,
  AccessExpiredRecord,
  AccessRevokingRecord,
  AccessRevokedRecord,
  AccessEndedRecord,
  AccessDeniedRecord,
  AccessApprovalExpiredRecord,
  AccessCancelledRecord,
  AccessFailedRecord,
  MembershipGrantedRecord,
  MembershipRevokedRecord,
]);

/** One audit record (any event). */
export type AuditRecord = Static<typeof AuditRecordV1>;
/** The record of one event. */
export type AuditRecordOf<E extends AuditEvent> = Extract<AuditRecord, { readonly event: E }>;
export type AuditMembership = Static<typeof AuditMembership>;
export type AuditDatabase = Static<typeof AuditDatabase>;
export type AuditIdentity = Static<typeof AuditIdentity>;
export type AuditAccessChanges = Static<typeof AuditAccessChanges>;
export type AuditChangeSummary = Static<typeof AuditChangeSummary>;

/** Checked by the writer before a record leaves the process, as payloads are (`validatePayload`). */
export const auditRecordContract = defineContract({
  name: 'audit-record',
  subject: 'audit',
  versions: { 1: AuditRecordV1 },
});

/**
 * Each event's record schema alone, under the contract's name: a record names its event, and only that
 * event's branch of the union can accept it (every branch requires its own `event` literal), so checking
 * that branch decides as the union does. The union compiles in ~0.6-0.9 s of CPU (17 closed objects, once
 * per process at its first record) and checks a record in ~50 us by trying the branches in turn; one branch
 * compiles in ~25 ms and checks in a few us (docs/performance.md, "Ninth session").
 */
const EVENT_CONTRACTS: ReadonlyMap<unknown, MessageContract> = new Map(
  AuditRecordV1.anyOf.map((branch) => [
    (branch.properties as { readonly event: { readonly const: AuditEvent } }).event.const,
    defineContract({ ...auditRecordContract, versions: { [AUDIT_SCHEMA_VERSION]: branch } }),
  ]),
);

/**
 * Validates an audit record as `validatePayload(auditRecordContract, value)` does (the same verdict), against
 * the schema of the event it names; a value naming no known event is checked against the whole union (and
 * refused, with the union's detail).
 */
export function validateAuditRecord(value: unknown): DecodeResult<AuditRecord> {
  const event =
    typeof value === 'object' && value !== null ? (value as { readonly event?: unknown }).event : undefined;
  const own = EVENT_CONTRACTS.get(event);
  return own === undefined
    ? validatePayload(auditRecordContract, value)
    : (validatePayload(own, value) as DecodeResult<AuditRecord>);
}
