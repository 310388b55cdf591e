// End to end, ephemeral access holds against the people around it (issue 25, item 4; ADR 0020): an
// approver's status patch cannot prolong access or end the scheduler's duty to revoke. Each attack is a write
// a tenant or approver may make (kubectl against the API emulator, or the same calls through client-node);
// each assertion reads pg_auth_members of the real target database.
// The base policy is additive, so the planner never removes a stray edge: only a revocation does.
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources } from './support/ephemeral.js';

const REBUILD_MS = 2_000;
/** The approved duration of the attacked requests (seconds). */
const GRANTED_S = 8;

let stack: Stack;
let db: TargetDatabase;
let eph: EphemeralResources;
let reader: string;
let alice: string;

beforeAll(async () => {
  stack = await startStack({ env: { ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS) } });
  db = await stack.createDatabase('ephintegrity');
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  [reader, alice] = [stack.role('reader'), stack.role('alice')];
  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    reconciliation_mode: 'additive',
    roles: [
      { name: reader, login: false },
      { name: alice, login: true },
    ],
  });
  await stack.reconciled('orders');
  await eph.create('EphemeralAccessPolicy', 'auto', {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: `${GRANTED_S}s`,
    memberships: [{ role: reader, inherit: true }],
    postgresPolicyRef: { name: 'orders' },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function isMember(on = db, role = reader, member = alice): Promise<boolean> {
  const rows = await on.sql(
    `SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
      WHERE r.rolname = $1 AND u.rolname = $2`,
    [role, member],
  );
  return rows.length === 1;
}

async function activate(name: string, requestedDuration?: string, accessPolicy = 'auto', subject = alice) {
  await eph.create('EphemeralAccessRequest', name, {
    accessPolicyRef: { name: accessPolicy },
    subject: { role: subject },
    requestedBy: { username: 'alice@example.com' },
    ...(requestedDuration ? { requestedDuration } : {}),
  });
  return eph.phase(name, 'Active');
}

test('an approver who patches status.expiresAt later does not prolong access past grantedDuration', async () => {
  const active = await activate('prolonged');
  expect(await isMember()).toBe(true);
  const later = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await eph.patchStatus('EphemeralAccessRequest', 'prolonged', [
    { op: 'replace', path: '/status/expiresAt', value: later },
  ]);
  const ended = await eph.phase('prolonged', 'Ended', 40_000);
  expect(await isMember()).toBe(false);
  const activatedAt = Date.parse(active.status!.activatedAt!);
  // The recorded expiry is the activation plus the approved duration again, whatever was written.
  expect(Date.parse(ended.status!.expiresAt!)).toBe(activatedAt + GRANTED_S * 1000);
}, 90_000);

test('a terminal phase written into status does not release the membership: deleting the request revokes', async () => {
  await activate('forged-end', '30m');
  expect(await isMember()).toBe(true);
  await eph.patchStatus('EphemeralAccessRequest', 'forged-end', [
    { op: 'replace', path: '/status/phase', value: 'Ended' },
  ]);
  await eph.delete('EphemeralAccessRequest', 'forged-end');
  await waitFor('forged-end gone', async () => (await eph.request('forged-end')) === undefined, {
    timeoutMs: 30_000,
  });
  expect(await isMember()).toBe(false);
}, 90_000);
