// The audit record builders: every record validates against schema v1, carries the identities a reviewer
// needs, never a secret the inputs held, and the id is the same for the same event (the dedupe rule).
import type { Change } from '@rolepolicy/policy';
import { validatePayload } from '../contract.js';
import {
  accessChanges,
  accessEventOf,
  accessTransitionRecord,
  auditId,
  membershipRecords,
  planAppliedRecord,
  planDecisionRecord,
  planFailedRecord,
} from './audit-builders.js';
import { auditRecordContract, AUDIT_EVENTS, type AuditRecord } from './audit-record.js';

const AT = '2026-11-28T10:00:00.000Z';
const PASSWORD = 'hunter2-Sup3rSecret';
const URL_WITH_PASSWORD = `postgres://app:${PASSWORD}@db.internal:5432/orders`;
const VERIFIER = 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy';
const SECRETS = [PASSWORD, URL_WITH_PASSWORD, VERIFIER, 'VALID UNTIL'];

const database = { host: 'db.internal', port: 5432, name: 'orders', target: 'shop/orders-db/url' };

const changes: readonly Change[] = [
  {
    kind: 'create_role',
    name: 'app_reader',
    state: {
      login: false,
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
  { kind: 'set_password', name: 'app', password_source: 'orders-pw:password:123' },
  { kind: 'add_member', role: 'app_reader', member: 'app', inherit: true, admin: false },
  { kind: 'remove_member', role: 'app_writer', member: 'app', grantor: null },
  {
    kind: 'grant',
    role: 'app_reader',
    privileges: ['SELECT'],
    object_type: 'table',
    name: 'orders',
    schema: 'public',
  },
  { kind: 'drop_role', name: 'legacy' },
];

function valid(record: AuditRecord): AuditRecord {
  const checked = validatePayload(auditRecordContract, record);
  if (!checked.ok) throw new Error(checked.detail);
  return record;
}

function applied(overrides: Partial<Parameters<typeof planAppliedRecord>[0]> = {}) {
  return planAppliedRecord({
    at: AT,
    plan: { namespace: 'shop', name: 'orders-3f2c1e9a', uid: 'plan-uid' },
    policy: { name: 'orders', uid: 'policy-uid' },
    digest: 'sha256:abc',
    idempotencyKey: 'policy-uid/orders-3f2c1e9a/sha256:abc/2026-11-28T09:59:00Z',
    summary: {
      default_privileges_revoked: 0,
      default_privileges_set: 0,
      grants_added: 1,
      grants_revoked: 0,
      members_added: 1,
      members_removed: 1,
      passwords_set: 1,
      roles_altered: 0,
      roles_created: 1,
      roles_dropped: 1,
      schema_owners_altered: 0,
      schemas_created: 0,
      sessions_terminated: 0,
      total: 6,
    },
    changes,
    statementCount: 6,
    database,
    executor: 'executor-7d9f-0',
    ...overrides,
  });
}

const request = {
  metadata: { namespace: 'shop', name: 'alice-read', uid: 'req-uid' },
  spec: {
    accessPolicyRef: { name: 'read' },
    subject: { role: 'alice' },
    requestedBy: { username: 'alice@example.com' },
  },
  status: {
    resolvedAccess: {
      accessPolicyUid: 'ap-uid',
      targetPolicyUid: 'policy-uid',
      bundleHash: 'sha256:bundle',
      grantedDuration: '30m',
      memberships: [{ role: 'app_reader', member: 'alice', inherit: true }],
    },
    decidedBy: { username: 'bob@example.com' },
    expiresAt: '2026-11-28T10:30:00Z',
  },
};

describe('plan.applied', () => {
  it('names the plan, policy, digest, executor, database and the access changes by name', () => {
    const record = valid(applied());
    expect(record).toMatchObject({
      schema: 'rolepolicy.audit',
      v: 1,
      event: 'plan.applied',
      source: 'executor',
      object: { kind: 'PostgresPolicyPlan', namespace: 'shop', name: 'orders-3f2c1e9a', uid: 'plan-uid' },
      policy: { name: 'orders', uid: 'policy-uid' },
      digest: 'sha256:abc',
      executor: 'executor-7d9f-0',
      database,
      changes: {
        rolesCreated: ['app_reader'],
        rolesDropped: ['legacy'],
        passwordsSet: ['app'],
        membershipsGranted: [{ role: 'app_reader', member: 'app', admin: false, inherit: true }],
        membershipsRevoked: [{ role: 'app_writer', member: 'app', admin: null, inherit: null }],
        privileges: [
          {
            op: 'grant',
            role: 'app_reader',
            privileges: ['SELECT'],
            objectType: 'table',
            schema: 'public',
            object: 'orders',
          },
        ],
        truncated: false,
      },
    });
  });

  it('never carries the password source version', () => {
    expect(JSON.stringify(applied())).not.toContain('orders-pw:password');
  });

  it('is the same record id for a redelivered request, another for another digest', () => {
    expect(applied({ at: '2026-11-28T11:00:00.000Z' }).id).toBe(applied().id);
    expect(applied({ digest: 'sha256:def' }).id).not.toBe(applied().id);
  });

  it('truncates long change lists and says so', () => {
    const many: Change[] = Array.from({ length: 600 }, (_, i) => ({
      kind: 'add_member' as const,
      role: `r${i}`,
      member: 'm',
      inherit: true,
      admin: false,
    }));
    const record = valid(applied({ changes: many }));
    expect(record.event === 'plan.applied' && record.changes.membershipsGranted.length).toBe(500);
    expect(record.event === 'plan.applied' && record.changes.truncated).toBe(true);
  });
});

describe('plan decisions', () => {
  const plan = {
    metadata: { namespace: 'shop', name: 'orders-3f2c1e9a', uid: 'plan-uid' },
    status: {
      changeDigest: 'sha256:abc',
      decidedBy: { username: 'carol@example.com', groups: ['sre'], uid: 'u-1' },
      conditions: [{ type: 'Approved', status: 'True', reason: 'ApprovedByUser' }],
    },
  };

  it('records the deciding identity as recorded on the plan', () => {
    const record = valid(
      planDecisionRecord({
        event: 'plan.approved',
        at: AT,
        plan,
        policy: { name: 'orders', uid: 'p' },
        automatic: false,
      }),
    );
    expect(record).toMatchObject({
      event: 'plan.approved',
      source: 'planner',
      decidedBy: { username: 'carol@example.com', groups: ['sre'], uid: 'u-1' },
      automatic: false,
      reason: 'ApprovedByUser',
      digest: 'sha256:abc',
    });
  });

  it('is one record per plan and decision, whenever it is observed', () => {
    const a = planDecisionRecord({
      event: 'plan.denied',
      at: AT,
      plan,
      policy: { name: 'o' },
      automatic: false,
    });
    const b = planDecisionRecord({
      event: 'plan.denied',
      at: 'later',
      plan,
      policy: { name: 'o' },
      automatic: false,
    });
    expect(a.id).toBe(b.id);
    expect(a.id).not.toBe(
      planDecisionRecord({ event: 'plan.approved', at: AT, plan, policy: { name: 'o' }, automatic: false })
        .id,
    );
  });

  it('plan.failed keeps the reason and SQLSTATE only', () => {
    const record = valid(
      planFailedRecord({
        at: AT,
        source: 'executor',
        plan: { namespace: 'shop', name: 'orders-3f2c1e9a' },
        policy: { name: 'orders' },
        digest: 'sha256:abc',
        key: 'k',
        reason: 'ExecutionFailed',
        errorClass: 'permanent',
        sqlState: '42501',
      }),
    );
    expect(record).toMatchObject({ reason: 'ExecutionFailed', sqlState: '42501', errorClass: 'permanent' });
  });
});

describe('access request transitions', () => {
  it.each([
    ['Pending', 'PendingApproval', 'Resolved', 'access.requested'],
    ['PendingApproval', 'Applying', 'Approved', 'access.approved'],
    ['Applying', 'Active', 'MembershipsGranted', 'access.activated'],
    ['Active', 'Revoking', 'AccessExpired', 'access.expired'],
    ['Active', 'Revoking', 'Deleted', 'access.revoking'],
    ['Revoking', 'Ended', 'MembershipsRevoked', 'access.ended'],
    ['Revoking', 'Revoked', 'Deleted', 'access.revoked'],
    ['Active', 'Denied', 'Denied', 'access.denied'],
    ['PendingApproval', 'ApprovalExpired', 'TTL', 'access.approval_expired'],
    ['Pending', 'Cancelled', 'Cancelled', 'access.cancelled'],
    ['Applying', 'Failed', 'PlanFailed', 'access.failed'],
  ] as const)('%s -> %s (%s) is %s', (from, to, reason, event) => {
    expect(accessEventOf(to, reason)).toBe(event);
    const record = valid(accessTransitionRecord(request, { from, to, reason, message: 'm' }, AT));
    expect(record).toMatchObject({
      event,
      object: { kind: 'EphemeralAccessRequest', namespace: 'shop', name: 'alice-read', uid: 'req-uid' },
      accessPolicy: { name: 'read', uid: 'ap-uid' },
      subject: 'alice',
      requestedBy: { username: 'alice@example.com' },
      decidedBy: { username: 'bob@example.com' },
      bundleHash: 'sha256:bundle',
      memberships: [{ role: 'app_reader', member: 'alice', admin: false, inherit: true }],
    });
  });

  it('redacts credentials from the transition message', () => {
    const record = accessTransitionRecord(
      request,
      {
        from: 'Applying',
        to: 'Failed',
        reason: 'PlanFailed',
        message: `connect to ${URL_WITH_PASSWORD} failed`,
      },
      AT,
    );
    expect(JSON.stringify(record)).not.toContain(PASSWORD);
  });
});

describe('membership records', () => {
  const base = {
    at: AT,
    idempotencyKey: 'req-uid/Activate/sha256:bundle',
    namespace: 'shop',
    request: { name: 'alice-read', uid: 'req-uid' },
    plan: { name: 'alice-read-req-activate-bundle', uid: 'plan-uid' },
    policy: { name: 'orders', uid: 'policy-uid' },
    bundleHash: 'sha256:bundle',
    database,
    executor: 'executor-0',
  };

  it('an Activate grants the edges it added, a Revoke revokes the ones it removed', () => {
    const [granted] = membershipRecords({
      ...base,
      operation: 'Activate',
      changes: [{ kind: 'add_member', role: 'app_reader', member: 'alice', inherit: true, admin: false }],
    });
    expect(valid(granted!)).toMatchObject({
      event: 'membership.granted',
      object: { kind: 'EphemeralAccessRequest', name: 'alice-read' },
      memberships: [{ role: 'app_reader', member: 'alice' }],
    });
    const [revoked] = membershipRecords({
      ...base,
      operation: 'Revoke',
      idempotencyKey: 'req-uid/Revoke/sha256:bundle',
      changes: [{ kind: 'remove_member', role: 'app_reader', member: 'alice', grantor: null }],
    });
    expect(valid(revoked!)).toMatchObject({ event: 'membership.revoked', operation: 'Revoke' });
  });

  it('a sweep is about the policy; nothing changed writes nothing', () => {
    const [swept] = membershipRecords({
      ...base,
      operation: 'Sweep',
      request: null,
      plan: null,
      bundleHash: null,
      changes: [{ kind: 'remove_member', role: 'app_reader', member: 'mallory', grantor: null }],
    });
    expect(valid(swept!)).toMatchObject({
      object: { kind: 'PostgresPolicy', name: 'orders' },
      request: null,
    });
    expect(membershipRecords({ ...base, operation: 'Activate', changes: [] })).toEqual([]);
  });
});

describe('the schema', () => {
  it('refuses a record with a field it does not define (no free-form secrets can ride along)', () => {
    const record = { ...applied(), password: PASSWORD } as unknown;
    expect(validatePayload(auditRecordContract, record).ok).toBe(false);
  });

  it('no record built from inputs holding secrets contains them', () => {
    const records: AuditRecord[] = [
      applied(),
      accessTransitionRecord(
        request,
        {
          from: 'Active',
          to: 'Denied',
          reason: 'Denied',
          message: `PASSWORD '${PASSWORD}' ${URL_WITH_PASSWORD} ${VERIFIER}`,
        },
        AT,
      ),
    ];
    const text = JSON.stringify(records);
    for (const secret of SECRETS.slice(0, 3)) expect(text).not.toContain(secret);
  });

  it('ids are 32 hex characters and depend on every part', () => {
    expect(auditId('plan.applied', ['a', 'b'])).toMatch(/^[0-9a-f]{32}$/);
    expect(auditId('plan.applied', ['a', 'b'])).not.toBe(auditId('plan.applied', ['ab', '']));
  });

  it('lists every event once', () => {
    expect(new Set(AUDIT_EVENTS).size).toBe(AUDIT_EVENTS.length);
  });

  it('accessChanges ignores what changes no access', () => {
    expect(accessChanges([{ kind: 'terminate_sessions', role: 'x' }])).toMatchObject({
      rolesCreated: [],
      membershipsGranted: [],
      truncated: false,
    });
  });
});
