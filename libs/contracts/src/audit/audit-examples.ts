// One example record per event, built by the real builders from fixed inputs: docs/audit.md shows exactly
// these (audit-doc.spec.ts compares them), so the documented examples cannot drift from the schema.
import type { Change } from '@rolepolicy/policy';
import {
  accessTransitionRecord,
  membershipRecords,
  planAppliedRecord,
  planDecisionRecord,
  planFailedRecord,
  type AccessPhase,
} from './audit-builders.js';
import type { AuditEvent, AuditRecord } from './audit-record.js';

const AT = '2026-11-28T09:00:00.000Z';
const database = { host: 'orders-db.shop.svc', port: 5432, name: 'orders', target: 'shop/orders-db/url' };
const summary = {
  default_privileges_revoked: 0,
  default_privileges_set: 0,
  grants_added: 1,
  grants_revoked: 0,
  members_added: 1,
  members_removed: 1,
  passwords_set: 1,
  roles_altered: 0,
  roles_created: 1,
  roles_dropped: 0,
  schema_owners_altered: 0,
  schemas_created: 0,
  sessions_terminated: 0,
  total: 4,
};
const changes: Change[] = [
  {
    kind: 'create_role',
    name: 'orders_app',
    state: {
      login: true,
      superuser: false,
      createdb: false,
      createrole: false,
      inherit: true,
      replication: false,
      bypassrls: false,
      connection_limit: -1,
      comment: null,
      password_valid_until: null,
    },
  },
  { kind: 'set_password', name: 'orders_app', password_source: 'orders-app:password:41822' },
  { kind: 'add_member', role: 'orders_writer', member: 'orders_app', inherit: true, admin: false },
  { kind: 'remove_member', role: 'orders_reader', member: 'orders_app', grantor: null },
  {
    kind: 'grant',
    role: 'orders_writer',
    privileges: ['INSERT', 'UPDATE'],
    object_type: 'table',
    name: 'orders',
    schema: 'public',
  },
];
const plan = { namespace: 'shop', name: 'orders-3f2c1e9a0b4d', uid: '5b0e6f0c-8f5e-4d36-9a53-3d1a0c1f6b21' };
const policy = { name: 'orders', uid: '0c5d2b7e-1f9a-4c1e-8d43-2b6f9e7a1c30' };
const decidedPlan = (type: 'Approved' | 'Denied', reason: string) => ({
  metadata: plan,
  status: {
    changeDigest: 'sha256:9c1f5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f',
    changeSummary: summary,
    decidedBy: { username: 'carol@example.com', uid: 'oidc:7f2a', groups: ['dba', 'system:authenticated'] },
    conditions: [{ type, status: 'True', reason }],
  },
});

const request = {
  metadata: { namespace: 'shop', name: 'alice-write-be9b5', uid: 'e2c7a9d4-3b61-4f0e-a8d2-6c5b4a3f2e1d' },
  spec: {
    accessPolicyRef: { name: 'orders-write' },
    subject: { role: 'alice' },
    requestedBy: {
      username: 'alice@example.com',
      uid: 'oidc:2d7e',
      groups: ['orders-devs', 'system:authenticated'],
    },
  },
  status: {
    resolvedAccess: {
      accessPolicyUid: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      targetPolicyUid: policy.uid,
      bundleHash: 'sha256:41d0c5e9a8b7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1',
      grantedDuration: '30m',
      memberships: [{ role: 'orders_writer', member: 'alice', inherit: true }],
    },
    decidedBy: {
      username: 'security@example.com',
      uid: 'oidc:41c9',
      groups: ['security', 'system:authenticated'],
    },
    expiresAt: '2026-11-28T09:30:00Z',
  },
};
const transition = (from: AccessPhase, to: AccessPhase, reason: string, message: string, at = AT) =>
  accessTransitionRecord(request, { from, to, reason, message }, at);

const scoped = (operation: 'Activate' | 'Revoke', kind: 'add_member' | 'remove_member') =>
  membershipRecords({
    at: AT,
    operation,
    idempotencyKey: `${request.metadata.uid}/${operation}/${request.status.resolvedAccess.bundleHash}`,
    namespace: 'shop',
    request: { name: request.metadata.name, uid: request.metadata.uid },
    plan: { name: `alice-write-be9b5-e2c7a9d4-${operation.toLowerCase()}-41d0c5e9a8b7`, uid: null },
    policy,
    bundleHash: request.status.resolvedAccess.bundleHash,
    changes: [
      kind === 'add_member'
        ? { kind, role: 'orders_writer', member: 'alice', inherit: true, admin: false }
        : { kind, role: 'orders_writer', member: 'alice', grantor: null },
    ],
    database,
    executor: 'rolepolicy-executor-6c9d7-2xk4p',
  })[0]!;

/** The example of each event. */
export const AUDIT_EXAMPLES: Readonly<Record<AuditEvent, AuditRecord>> = {
  'plan.approved': planDecisionRecord({
    event: 'plan.approved',
    at: AT,
    plan: decidedPlan('Approved', 'ApprovedByUser'),
    policy,
    automatic: false,
  }),
  'plan.denied': planDecisionRecord({
    event: 'plan.denied',
    at: AT,
    plan: decidedPlan('Denied', 'DeniedByUser'),
    policy,
    automatic: false,
  }),
  'plan.applied': planAppliedRecord({
    at: AT,
    plan,
    policy,
    digest: 'sha256:9c1f5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f',
    idempotencyKey: `${policy.uid}/${plan.name}/sha256:9c1f/2026-11-28T08:59:58Z`,
    summary,
    changes,
    statementCount: 5,
    database,
    executor: 'rolepolicy-executor-6c9d7-2xk4p',
  }),
  'plan.failed': planFailedRecord({
    at: AT,
    source: 'executor',
    plan,
    policy,
    digest: 'sha256:9c1f5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f',
    key: `${policy.uid}/${plan.name}/sha256:9c1f/2026-11-28T08:59:58Z`,
    reason: 'ExecutionFailed',
    errorClass: 'permanent',
    sqlState: '42501',
    executor: 'rolepolicy-executor-6c9d7-2xk4p',
  }),
  'access.requested': transition('Pending', 'PendingApproval', 'AwaitingApproval', 'waiting for approval'),
  'access.approved': transition('PendingApproval', 'Applying', 'Approved', 'approved; granting'),
  'access.activated': transition('Applying', 'Active', 'MembershipsGranted', 'memberships granted'),
  'access.expired': transition(
    'Active',
    'Revoking',
    'AccessExpired',
    'access expired at 2026-11-28T09:30:00Z',
  ),
  'access.revoking': transition('Active', 'Revoking', 'Deleted', 'the request is being deleted; revoking'),
  'access.revoked': transition('Revoking', 'Revoked', 'Deleted', 'revoked; the request is deleted'),
  'access.ended': transition('Revoking', 'Ended', 'Ended', 'memberships revoked'),
  'access.denied': transition('PendingApproval', 'Denied', 'Denied', 'denied: not during the freeze'),
  'access.approval_expired': transition(
    'PendingApproval',
    'ApprovalExpired',
    'ApprovalExpired',
    'no decision in 1h',
  ),
  'access.cancelled': transition('PendingApproval', 'Cancelled', 'Cancelled', 'cancelled by the requester'),
  'access.failed': transition('Applying', 'Failed', 'PlanFailed', 'the activation plan failed'),
  'membership.granted': scoped('Activate', 'add_member'),
  'membership.revoked': scoped('Revoke', 'remove_member'),
};
