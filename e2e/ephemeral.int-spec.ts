// End to end, ephemeral access through every service (gateway, planner, inspector, executor, access-scheduler)
// on a real database: Automatic activation and revocation at expiry seen in pg_auth_members, Required
// approval bound to the bundle hash (a wrong one refused), ApprovalExpired, Denied as a kill switch,
// deletion of an active request, suspension, retained memberships, and the admission rules of requests.
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import pg from 'pg';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources } from './support/ephemeral.js';

const REBUILD_MS = 2_000;

let stack: Stack;
let db: TargetDatabase;
let eph: EphemeralResources;
let reader: string;
let writer: string;
let alice: string;

beforeAll(async () => {
  // NATS with the production access control: every ephemeral flow must stay within each service's permissions.
  stack = await startStack({
    natsAccessControl: true,
    env: { ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS) },
  });
  db = await stack.createDatabase('ephemeral');
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  [reader, writer, alice] = [stack.role('reader'), stack.role('writer'), stack.role('alice')];
  await stack.resources.createPolicy('orders', basePolicy([]));
  await stack.reconciled('orders');
  await eph.create(
    'EphemeralAccessPolicy',
    'auto',
    accessPolicy({ memberships: [{ role: reader, inherit: true }] }),
  );
  await eph.create(
    'EphemeralAccessPolicy',
    'approval',
    accessPolicy({
      approval: { mode: 'Required' },
      memberships: [{ role: writer, inherit: true }],
      defaultDuration: '1h',
    }),
  );
}, 60_000);

// On the secured NATS a service's close has been seen to take over a minute (cause open, docs/next-steps).
afterAll(async () => {
  await stack?.stop();
}, 180_000);

function basePolicy(memberships: readonly object[]): Record<string, unknown> {
  return {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: reader, login: false },
      { name: writer, login: false },
      { name: alice, login: true },
    ],
    memberships,
  };
}

function accessPolicy(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '8s',
    postgresPolicyRef: { name: 'orders' },
    ...extra,
  };
}

function request(policy: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    accessPolicyRef: { name: policy },
    subject: { role: alice },
    requestedBy: { username: 'alice@example.com' },
    justification: 'incident 42',
    ...extra,
  };
}

async function isMember(role: string, member: string): Promise<boolean> {
  const rows = await db.sql(
    `SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
      WHERE r.rolname = $1 AND u.rolname = $2`,
    [role, member],
  );
  return rows.length === 1;
}

async function planOf(req: EphemeralAccessRequest, operation: 'activate' | 'revoke') {
  const uid = (req.metadata.uid ?? '')
    .replace(/[^a-z0-9]/gi, '')
    .slice(0, 8)
    .toLowerCase();
  const hash = req.status!.resolvedAccess!.bundleHash.slice(7, 19);
  return stack.resources.plan(`${req.metadata.name}-${uid}-${operation}-${hash}`);
}

test('Automatic: the membership exists while Active and is gone after expiry (Ended)', async () => {
  await waitFor(
    'access policy auto Accepted',
    async () =>
      condition((await eph.accessPolicy('auto'))?.status?.conditions, 'Accepted')?.status === 'True',
  );
  await eph.create('EphemeralAccessRequest', 'auto-1', request('auto'));
  const active = await eph.phase('auto-1', 'Active');
  expect(await isMember(reader, alice)).toBe(true);
  expect(condition(active.status?.conditions, 'Applied')).toMatchObject({
    status: 'True',
    reason: 'MembershipsGranted',
  });
  const activation = await planOf(active, 'activate');
  expect(activation?.status?.phase).toBe('Applied');
  expect(activation?.status?.sqlInline).toContain('GRANT');

  const ended = await eph.phase('auto-1', 'Ended', 40_000);
  expect(await isMember(reader, alice)).toBe(false);
  expect(condition(ended.status?.conditions, 'Ready')).toMatchObject({ status: 'True', reason: 'Ended' });
  expect((await planOf(ended, 'revoke'))?.status?.phase).toBe('Applied');
  // The durable policy converges with the request gone: the overlay ended with it, nothing is granted again.
  await stack.reconciled('orders');
  expect(await isMember(reader, alice)).toBe(false);
}, 90_000);

test('a revocation under way is its own: the base policy plans no REVOKE of it beside it (ADR 0008, amended)', async () => {
  await eph.create('EphemeralAccessRequest', 'held-1', request('auto'));
  await eph.phase('held-1', 'Active');
  const plansBefore = (await stack.resources.plans('orders')).map((p) => p.metadata.name);
  // The executor's per-database lock, held here: the revocation waits for it, `Revoking`, edge still live.
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query(
      `SELECT pg_catalog.pg_advisory_lock(pg_catalog.hashtextextended('rolepolicy:' || pg_catalog.current_database(), 0))`,
    );
    await eph.phase('held-1', 'Revoking', 30_000);
    // A base pass while the revocation waits: before the amendment it saw a live edge nobody held and planned
    // its REVOKE beside the scoped one.
    const asked = await stack.resources.requestReconcile('orders');
    await waitFor(
      'the forced pass handled',
      async () => (await stack.resources.policy('orders'))?.status?.lastHandledReconcileAt === asked,
    );
    expect(await isMember(reader, alice)).toBe(true);
    expect((await stack.resources.plans('orders')).map((p) => p.metadata.name)).toEqual(plansBefore);
  } finally {
    await holder.end();
  }
  await eph.phase('held-1', 'Ended', 30_000);
  expect(await isMember(reader, alice)).toBe(false);
  expect((await stack.resources.plans('orders')).map((p) => p.metadata.name)).toEqual(plansBefore);
}, 90_000);

test('Required: an approval bound to bundleHash and grantedDuration activates; a wrong hash or duration is refused', async () => {
  await eph.create('EphemeralAccessRequest', 'wrong-hash', request('approval'));
  const pending = await eph.phase('wrong-hash', 'PendingApproval');
  await eph.decide('wrong-hash', 'Approved', {
    bundleHash: `sha256:${'0'.repeat(64)}`,
    grantedDuration: pending.status!.resolvedAccess!.grantedDuration,
  });
  await eph.create('EphemeralAccessRequest', 'wrong-duration', request('approval'));
  const pending2 = await eph.phase('wrong-duration', 'PendingApproval');
  await eph.decide('wrong-duration', 'Approved', {
    bundleHash: pending2.status!.resolvedAccess!.bundleHash,
    grantedDuration: '1h',
  });
  for (const name of ['wrong-hash', 'wrong-duration']) {
    const refused = await waitFor(`${name} refused`, async () => {
      const r = await eph.request(name);
      return r?.status?.lastError?.includes('approval refused') ? r : undefined;
    });
    expect(refused.status?.phase).toBe('PendingApproval');
  }
  expect(await isMember(writer, alice)).toBe(false);

  await eph.create('EphemeralAccessRequest', 'approved', request('approval'));
  const waiting = await eph.phase('approved', 'PendingApproval');
  const { bundleHash, grantedDuration } = waiting.status!.resolvedAccess!;
  await eph.decide(
    'approved',
    'Approved',
    { bundleHash, grantedDuration, message: 'OPS-7' },
    'bob@example.com',
  );
  const active = await eph.phase('approved', 'Active');
  expect(active.status?.decidedBy?.username).toBe('bob@example.com');
  expect(await isMember(writer, alice)).toBe(true);

  // Deleting an active request is the early revocation: the finalizer holds it until revoked.
  await eph.delete('EphemeralAccessRequest', 'approved');
  await waitFor('approved gone', async () => (await eph.request('approved')) === undefined, {
    timeoutMs: 30_000,
  });
  expect(await isMember(writer, alice)).toBe(false);
  for (const name of ['wrong-hash', 'wrong-duration']) await eph.delete('EphemeralAccessRequest', name);
}, 90_000);

test('ApprovalExpired after pendingRequestTTL', async () => {
  await eph.create(
    'EphemeralAccessPolicy',
    'short-ttl',
    accessPolicy({
      approval: { mode: 'Required' },
      pendingRequestTTL: '3s',
      memberships: [{ role: writer, inherit: true }],
    }),
  );
  await eph.create('EphemeralAccessRequest', 'too-late', request('short-ttl'));
  await eph.phase('too-late', 'PendingApproval');
  const expired = await eph.phase('too-late', 'ApprovalExpired');
  expect(expired.status?.expiresAt ?? null).toBeNull();
  expect(await isMember(writer, alice)).toBe(false);
}, 60_000);

test('Denied on an Active request revokes at once', async () => {
  await eph.create('EphemeralAccessRequest', 'deny-me', request('auto', { requestedDuration: '30m' }));
  await eph.phase('deny-me', 'Active');
  expect(await isMember(reader, alice)).toBe(true);
  await eph.decide('deny-me', 'Denied', { message: 'incident closed' });
  const denied = await eph.phase('deny-me', 'Denied');
  expect(await isMember(reader, alice)).toBe(false);
  expect(condition(denied.status?.conditions, 'Denied')?.message).toBe('incident closed');
  expect(denied.status?.endedAt).toBeDefined();
}, 60_000);

test('suspend: new requests wait in Pending; active access still ends at its expiry', async () => {
  await eph.create('EphemeralAccessRequest', 'before-suspend', request('auto'));
  await eph.phase('before-suspend', 'Active');
  await eph.patchSpec('EphemeralAccessPolicy', 'auto', { suspend: true });
  await waitFor(
    'Suspended=True',
    async () =>
      condition((await eph.accessPolicy('auto'))?.status?.conditions, 'Suspended')?.status === 'True',
  );
  await eph.create('EphemeralAccessRequest', 'while-suspended', request('auto'));
  const held = await waitFor('Resolved=False/Suspended', async () => {
    const r = await eph.request('while-suspended');
    return condition(r?.status?.conditions, 'Resolved')?.reason === 'Suspended' ? r : undefined;
  });
  expect(held.status?.phase).toBe('Pending');
  await eph.phase('before-suspend', 'Ended', 40_000);
  expect(await isMember(reader, alice)).toBe(false);

  await eph.patchSpec('EphemeralAccessPolicy', 'auto', { suspend: false });
  await eph.phase('while-suspended', 'Active');
  await eph.phase('while-suspended', 'Ended', 40_000);
}, 120_000);

test('retained memberships: an edge the base policy declared meanwhile stays, MembershipBecamePermanent', async () => {
  await eph.create(
    'EphemeralAccessRequest',
    'becomes-permanent',
    request('auto', { requestedDuration: '20s' }),
  );
  await eph.phase('becomes-permanent', 'Active');
  await stack.resources.patchPolicySpec(
    'orders',
    basePolicy([{ role: reader, members: [{ name: alice, inherit: true }] }]),
  );
  // Convergence waits here allow for a loaded CI machine running two test files at once.
  await stack.reconciled('orders', 60_000);
  const ended = await eph.phase('becomes-permanent', 'Ended', 60_000);
  expect(ended.status?.retainedMemberships).toEqual([{ role: reader, member: alice, inherit: true }]);
  expect(condition(ended.status?.conditions, 'Ready')?.message ?? '').toContain('kept');
  expect(await isMember(reader, alice)).toBe(true);
  await stack.resources.patchPolicySpec('orders', basePolicy([]));
  await stack.reconciled('orders', 60_000);
}, 200_000);

test('admission: request spec is immutable, resolvedAccess is write-once, condition types are declared', async () => {
  const ended = await eph.phase('auto-1', 'Ended');
  const failure = async (write: Promise<unknown>): Promise<string> => {
    try {
      await write;
      return '';
    } catch (error) {
      return String((error as { body?: unknown }).body ?? error);
    }
  };
  expect(
    await failure(eph.patchSpec('EphemeralAccessRequest', 'auto-1', { requestedDuration: '2h' })),
  ).toContain('request spec is immutable');
  expect(
    await failure(
      eph.patchStatus('EphemeralAccessRequest', 'auto-1', [
        { op: 'replace', path: '/status/resolvedAccess/grantedDuration', value: '9999s' },
      ]),
    ),
  ).toContain('resolvedAccess is write-once');
  expect(
    await failure(
      eph.patchStatus('EphemeralAccessRequest', 'auto-1', [
        { op: 'add', path: '/status/conditions/-', value: { type: 'Cancelled', status: 'True' } },
      ]),
    ),
  ).toContain('request conditions must use a declared lifecycle or decision type');
  expect((await eph.request('auto-1'))?.status?.resolvedAccess).toEqual(ended.status?.resolvedAccess);
});

test('no service needed a NATS permission it does not have', async () => {
  expect(await stack.natsAccess!.violations()).toEqual([]);
});
