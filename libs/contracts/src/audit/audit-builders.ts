// Pure builders of audit records (audit-record.ts): each service gathers the identities of an event and
// calls one of these; the record id is derived here so every writer of the same event agrees on it.
// No clock and no I/O: `at` is passed in. Free text passes through redactSecrets and is clipped.
import { createHash } from 'node:crypto';
import type { Change, ChangeSummary } from '@rolepolicy/policy';
import { redactSecrets } from '../redact.js';
import {
  AUDIT_LIST_LIMIT,
  AUDIT_SCHEMA_VERSION,
  type AuditAccessChanges,
  type AuditDatabase,
  type AuditEvent,
  type AuditIdentity,
  type AuditMembership,
  type AuditRecordOf,
} from './audit-record.js';

/**
 * The record id: the first 128 bits of SHA-256 over the event and the parts that make the event unique
 * (object uid, digest or bundle hash, transition). Two writers of one event (a redelivery, a new leader)
 * produce the same id; consumers keep the first record of each id.
 * @example auditId('plan.applied', [policyUid, planName, digest])
 */
export function auditId(event: AuditEvent, parts: readonly (string | null | undefined)[]): string {
  const text = [event, ...parts.map((p) => p ?? '')].join('\u0000');
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

const envelope = <E extends AuditEvent>(event: E, id: string, at: string) =>
  ({ schema: 'rolepolicy.audit', v: AUDIT_SCHEMA_VERSION, id, at, event }) as const;

/** Free text a person or the database wrote: never a credential (redactSecrets), bounded. */
function text(value: string | null | undefined, max = 1024): string {
  const clean = redactSecrets(value ?? '');
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}…`;
}

/** A plan as the planner reads it (the fields a decision record needs). */
export interface AuditPlanInput {
  readonly metadata: { readonly namespace?: string; readonly name?: string; readonly uid?: string };
  readonly status?: {
    readonly changeDigest?: string | null;
    readonly changeSummary?: ChangeSummary | null;
    readonly decidedBy?: {
      readonly username: string;
      readonly uid?: string | null;
      readonly groups?: readonly string[] | null;
    } | null;
    readonly conditions?: readonly {
      readonly type: string;
      readonly status: string;
      readonly reason?: string | null;
    }[];
  } | null;
}

/** An identity as a resource records it (`decidedBy`, `requestedBy`). */
export interface IdentityInput {
  readonly username: string;
  readonly uid?: string | null;
  readonly groups?: readonly string[] | null;
}

/** `decidedBy` / `requestedBy` as the record carries it. */
function identity(by: IdentityInput): AuditIdentity {
  return { username: by.username, uid: by.uid ?? null, groups: [...(by.groups ?? [])].slice(0, 64) };
}

/**
 * The planner recorded a plan decision: `plan.approved` (a person's `Approved=True`, or the planner's own
 * under `approval: auto`) or `plan.denied`. Decisions are terminal and write-once, so the id is the plan's
 * uid (its name and digest when the plan is being created) and the decision.
 */
export function planDecisionRecord(input: {
  readonly event: 'plan.approved' | 'plan.denied';
  readonly at: string;
  readonly plan: AuditPlanInput;
  readonly policy: { readonly name: string; readonly uid?: string | null };
  readonly automatic: boolean;
}): AuditRecordOf<'plan.approved'> | AuditRecordOf<'plan.denied'> {
  const { plan, event } = input;
  const status = plan.status ?? {};
  const conditionType = event === 'plan.approved' ? 'Approved' : 'Denied';
  const condition = (status.conditions ?? []).find((c) => c.type === conditionType && c.status === 'True');
  const digest = status.changeDigest ?? null;
  const namespace = plan.metadata.namespace ?? '';
  const name = plan.metadata.name ?? '';
  return {
    ...envelope(
      event,
      auditId(event, plan.metadata.uid ? [plan.metadata.uid] : [namespace, name, digest]),
      input.at,
    ),
    source: 'planner',
    object: { kind: 'PostgresPolicyPlan', namespace, name, uid: plan.metadata.uid ?? null },
    policy: { name: input.policy.name, uid: input.policy.uid ?? null },
    digest,
    decidedBy: status.decidedBy ? identity(status.decidedBy) : null,
    automatic: input.automatic,
    reason: condition?.reason ?? null,
    summary: status.changeSummary ? { ...status.changeSummary } : null,
  };
}

/** The access-relevant content of a plan's changes, by name (no password source, no SQL). */
export function accessChanges(changes: readonly Change[]): AuditAccessChanges {
  const out = {
    rolesCreated: [] as string[],
    rolesDropped: [] as string[],
    passwordsSet: [] as string[],
    membershipsGranted: [] as AuditMembership[],
    membershipsRevoked: [] as AuditMembership[],
    privileges: [] as AuditAccessChanges['privileges'][number][],
  };
  let truncated = false;
  const push = <T>(list: T[], item: T): void => {
    if (list.length < AUDIT_LIST_LIMIT) list.push(item);
    else truncated = true;
  };
  for (const change of changes) {
    switch (change.kind) {
      case 'create_role':
        push(out.rolesCreated, change.name);
        break;
      case 'drop_role':
        push(out.rolesDropped, change.name);
        break;
      case 'set_password':
        push(out.passwordsSet, change.name);
        break;
      case 'add_member':
        push(out.membershipsGranted, {
          role: change.role,
          member: change.member,
          admin: change.admin,
          inherit: change.inherit,
        });
        break;
      case 'remove_member':
        push(out.membershipsRevoked, {
          role: change.role,
          member: change.member,
          admin: null,
          inherit: null,
        });
        break;
      case 'grant':
      case 'revoke':
        push(out.privileges, {
          op: change.kind,
          role: change.role,
          privileges: change.privileges.slice(0, 32),
          objectType: change.object_type,
          schema: change.schema,
          object: change.name,
        });
        break;
      default:
        break; // counted in the summary; not a change of who is who or of object privileges
    }
  }
  return { ...out, truncated };
}

/** What the executor knows of a committed plan. */
export interface PlanAppliedInput {
  readonly at: string;
  readonly plan: { readonly namespace: string; readonly name: string; readonly uid?: string };
  readonly policy: { readonly name: string; readonly uid?: string };
  /** The digest the executor recomputed under its lock and executed. */
  readonly digest: string;
  /** The execute request's idempotency key (`<policy uid>/<plan>/<digest>/<computedAt>`). */
  readonly idempotencyKey: string;
  readonly summary: ChangeSummary;
  readonly changes: readonly Change[];
  readonly statementCount: number;
  readonly database: AuditDatabase;
  readonly executor: string;
}

/** `plan.applied`: the executor committed the plan's statements. Written once per request key and digest. */
export function planAppliedRecord(input: PlanAppliedInput): AuditRecordOf<'plan.applied'> {
  return {
    ...envelope('plan.applied', auditId('plan.applied', [input.idempotencyKey, input.digest]), input.at),
    source: 'executor',
    object: {
      kind: 'PostgresPolicyPlan',
      namespace: input.plan.namespace,
      name: input.plan.name,
      uid: input.plan.uid ?? null,
    },
    policy: { name: input.policy.name, uid: input.policy.uid ?? null },
    digest: input.digest,
    summary: { ...input.summary },
    changes: accessChanges(input.changes),
    statementCount: input.statementCount,
    database: input.database,
    executor: input.executor,
  };
}

/** `plan.failed`: an approved plan's execution failed (the transaction rolled back) or was refused. */
export function planFailedRecord(input: {
  readonly at: string;
  readonly source: 'executor' | 'planner';
  readonly plan: { readonly namespace: string; readonly name: string; readonly uid?: string | null };
  readonly policy: { readonly name: string; readonly uid?: string | null };
  readonly digest: string | null;
  /** What makes this failure one event: the execute request's key (executor) or the plan uid (planner). */
  readonly key: string;
  readonly reason: string;
  readonly errorClass?: 'transient' | 'permanent' | null;
  readonly sqlState?: string | null;
  readonly database?: AuditDatabase | null;
  readonly executor?: string | null;
}): AuditRecordOf<'plan.failed'> {
  return {
    ...envelope('plan.failed', auditId('plan.failed', [input.key, input.reason]), input.at),
    source: input.source,
    object: {
      kind: 'PostgresPolicyPlan',
      namespace: input.plan.namespace,
      name: input.plan.name,
      uid: input.plan.uid ?? null,
    },
    policy: { name: input.policy.name, uid: input.policy.uid ?? null },
    digest: input.digest,
    reason: input.reason.slice(0, 128) || 'Failed',
    errorClass: input.errorClass ?? null,
    sqlState:
      input.sqlState !== undefined && input.sqlState !== null && /^[0-9A-Z]{5}$/.test(input.sqlState)
        ? input.sqlState
        : null,
    database: input.database ?? null,
    executor: input.executor ?? null,
  };
}

/** `membership.granted` / `membership.revoked`: an ephemeral access plan or a sweep committed. */
export function membershipRecords(input: {
  readonly at: string;
  readonly operation: 'Activate' | 'Revoke' | 'Sweep';
  /** The scoped execute request's idempotency key (`<request uid>/<operation>/<bundle hash>`). */
  readonly idempotencyKey: string;
  readonly namespace: string;
  readonly request: { readonly name: string; readonly uid?: string | null } | null;
  readonly plan: { readonly name: string; readonly uid?: string | null } | null;
  readonly policy: { readonly name: string; readonly uid?: string | null };
  readonly bundleHash: string | null;
  readonly changes: readonly Change[];
  readonly database: AuditDatabase;
  readonly executor: string;
}): readonly (AuditRecordOf<'membership.granted'> | AuditRecordOf<'membership.revoked'>)[] {
  const granted = accessChanges(input.changes.filter((c) => c.kind === 'add_member')).membershipsGranted;
  const revoked = accessChanges(input.changes.filter((c) => c.kind === 'remove_member')).membershipsRevoked;
  const object = input.request
    ? { kind: 'EphemeralAccessRequest', namespace: input.namespace, ...ref(input.request) }
    : { kind: 'PostgresPolicy', namespace: input.namespace, ...ref(input.policy) };
  // A sweep has no request: the edges it revoked make the event (a later sweep of a re-created edge is another).
  const edges = (list: readonly AuditMembership[]) => list.map((m) => `${m.role}>${m.member}`).join(',');
  const common = {
    source: 'executor' as const,
    object,
    operation: input.operation,
    request: input.request ? ref(input.request) : null,
    plan: input.plan ? ref(input.plan) : null,
    policy: ref(input.policy),
    bundleHash: input.bundleHash,
    database: input.database,
    executor: input.executor,
  };
  const records: (AuditRecordOf<'membership.granted'> | AuditRecordOf<'membership.revoked'>)[] = [];
  if (granted.length > 0) {
    const id = auditId('membership.granted', [input.idempotencyKey, edges(granted)]);
    records.push({ ...envelope('membership.granted', id, input.at), ...common, memberships: granted });
  }
  if (revoked.length > 0) {
    const id = auditId('membership.revoked', [input.idempotencyKey, edges(revoked)]);
    records.push({ ...envelope('membership.revoked', id, input.at), ...common, memberships: revoked });
  }
  return records;
}

const ref = (r: { readonly name: string; readonly uid?: string | null }) => ({
  name: r.name,
  uid: r.uid ?? null,
});

/** The request phases of the access-scheduler's state machine (`EphemeralAccessRequest.status.phase`). */
export type AccessPhase =
  | 'Pending'
  | 'PendingApproval'
  | 'Applying'
  | 'Active'
  | 'Revoking'
  | 'Ended'
  | 'Revoked'
  | 'Cancelled'
  | 'Denied'
  | 'ApprovalExpired'
  | 'Failed';

type AccessEvent = Extract<AuditEvent, `access.${string}`>;

/** The event of a request transition: named by the phase it enters, and by why for Revoking. */
export function accessEventOf(to: AccessPhase, reason: string): AccessEvent {
  switch (to) {
    case 'Pending':
    case 'PendingApproval':
      return 'access.requested';
    case 'Applying':
      return 'access.approved';
    case 'Active':
      return 'access.activated';
    case 'Revoking':
      return reason === 'AccessExpired' ? 'access.expired' : 'access.revoking';
    case 'Ended':
      return 'access.ended';
    case 'Revoked':
      return 'access.revoked';
    case 'Cancelled':
      return 'access.cancelled';
    case 'Denied':
      return 'access.denied';
    case 'ApprovalExpired':
      return 'access.approval_expired';
    case 'Failed':
      return 'access.failed';
    default: {
      const never: never = to;
      return never;
    }
  }
}

/** A request as the access-scheduler holds it (the fields its records need). */
export interface AuditAccessRequestInput {
  readonly metadata: { readonly namespace?: string; readonly name?: string; readonly uid?: string };
  readonly spec: {
    readonly accessPolicyRef: { readonly name: string };
    readonly subject: { readonly role: string };
    readonly requestedBy: IdentityInput;
  };
  readonly status?: AuditAccessStatus | null;
}

/** The status fields a request's records read. */
export interface AuditAccessStatus {
  readonly resolvedAccess?: {
    readonly accessPolicyUid?: string;
    readonly targetPolicyUid?: string;
    readonly bundleHash?: string;
    readonly grantedDuration?: string;
    readonly memberships?: readonly {
      readonly role: string;
      readonly member: string;
      readonly inherit: boolean;
    }[];
  } | null;
  readonly decidedBy?: IdentityInput | null;
  readonly expiresAt?: string | null;
}

/**
 * The record of a request's transition `from -> to`, read from the request before the transition's write
 * and the status it writes (`after`). A request enters each phase once, so uid and transition make the id.
 */
export function accessTransitionRecord(
  request: AuditAccessRequestInput,
  transition: {
    readonly from: AccessPhase;
    readonly to: AccessPhase;
    readonly reason: string;
    readonly message: string;
  },
  at: string,
  after?: AuditAccessStatus | null,
): AuditRecordOf<AccessEvent> {
  const status = after ?? request.status ?? {};
  const resolved = status.resolvedAccess ?? request.status?.resolvedAccess ?? null;
  const event = accessEventOf(transition.to, transition.reason);
  const namespace = request.metadata.namespace ?? '';
  const name = request.metadata.name ?? '';
  const uid = request.metadata.uid ?? null;
  const id = auditId(event, [uid ?? `${namespace}/${name}`, transition.from, transition.to]);
  const decider = status.decidedBy ?? request.status?.decidedBy ?? null;
  return {
    ...envelope(event, id, at),
    source: 'access-scheduler',
    object: { kind: 'EphemeralAccessRequest', namespace, name, uid },
    accessPolicy: { name: request.spec.accessPolicyRef.name, uid: resolved?.accessPolicyUid ?? null },
    targetPolicyUid: resolved?.targetPolicyUid ?? null,
    bundleHash: resolved?.bundleHash ?? null,
    subject: request.spec.subject.role,
    requestedBy: identity(request.spec.requestedBy),
    decidedBy: decider ? identity(decider) : null,
    memberships:
      resolved?.memberships?.map((m) => ({
        role: m.role,
        member: m.member,
        admin: false,
        inherit: m.inherit,
      })) ?? null,
    grantedDuration: resolved?.grantedDuration ?? null,
    expiresAt: status.expiresAt ?? null,
    fromPhase: transition.from,
    toPhase: transition.to,
    reason: transition.reason.slice(0, 128) || transition.to,
    message: text(transition.message),
  } as AuditRecordOf<AccessEvent>;
}
