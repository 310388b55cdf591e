// End to end, ephemeral access holds against the people around it (issue 25, item 4; ADR 0020): an
// approver's status patch cannot prolong access or end the scheduler's duty to revoke. Each attack is a write
// a tenant or approver may make (kubectl against the API emulator, or the same calls through client-node);
// each assertion reads pg_auth_members of the real target database.
// The base policy is additive, so the planner never removes a stray edge: only a revocation does.
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources } from './support/ephemeral.js';
import { Kubectl } from './support/kubectl.js';

const REBUILD_MS = 2_000;
/** The approved duration of the attacked requests (seconds). */
const GRANTED_S = 8;

let stack: Stack;
let db: TargetDatabase;
let eph: EphemeralResources;
let kubectl: Kubectl;
let reader: string;
let alice: string;
let carol: string;

beforeAll(async () => {
  stack = await startStack({ env: { ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS) } });
  db = await stack.createDatabase('ephintegrity');
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  kubectl = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
  [reader, alice, carol] = [stack.role('reader'), stack.role('alice'), stack.role('carol')];
  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    reconciliation_mode: 'additive',
    roles: [
      { name: reader, login: false },
      { name: alice, login: true },
      { name: carol, login: true },
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
  kubectl?.dispose();
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

/** The deterministic name of a request's scoped plan (`scopedPlanName`), as anyone can compute it. */
function scopedName(req: EphemeralAccessRequest, operation: 'activate' | 'revoke'): string {
  const uid = (req.metadata.uid ?? '')
    .replace(/[^a-z0-9]/gi, '')
    .slice(0, 8)
    .toLowerCase();
  const hash = req.status!.resolvedAccess!.bundleHash.slice(7, 19);
  return `${req.metadata.name}-${uid}-${operation}-${hash}`;
}

/** A tenant's `kubectl apply` of a plan that takes the request's revoke plan name first. */
async function squatRevokePlan(req: EphemeralAccessRequest): Promise<void> {
  const manifest = {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: { name: scopedName(req, 'revoke') },
    spec: {
      managedDatabaseIdentity: 'squatter',
      policyGeneration: 1,
      policyRef: { name: 'orders' },
      reconciliationMode: 'additive',
      origin: { kind: 'EphemeralAccessRequest', name: req.metadata.name, uid: 'not-the-request' },
      scope: {
        kind: 'MembershipBundle',
        operation: 'Revoke',
        bundleHash: req.status!.resolvedAccess!.bundleHash,
      },
    },
  };
  await kubectl.ok(['apply', '-f', '-'], JSON.stringify(manifest));
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

test('a plan created by hand with the scoped revoke plan name is not obeyed: the revoke runs at expiry', async () => {
  const active = await activate('squatted');
  expect(await isMember()).toBe(true);
  await squatRevokePlan(active);
  await eph.phase('squatted', 'Ended', 40_000);
  expect(await isMember()).toBe(false);
  // The scheduler's own revoke plan replaced the squatter's.
  const revoke = await stack.resources.plan(scopedName(active, 'revoke'));
  expect(revoke?.spec.origin?.uid).toBe(active.metadata.uid);
  expect(revoke?.status?.phase).toBe('Applied');
}, 90_000);

test('deleting a request whose revoke plan name was taken by hand still revokes before the finalizer goes', async () => {
  const active = await activate('squatted-delete', '30m');
  expect(await isMember()).toBe(true);
  await squatRevokePlan(active);
  await eph.delete('EphemeralAccessRequest', 'squatted-delete');
  await waitFor('squatted-delete gone', async () => (await eph.request('squatted-delete')) === undefined, {
    timeoutMs: 30_000,
  });
  expect(await isMember()).toBe(false);
}, 90_000);

test('deleting the target PostgresPolicy while access is active does not stop the revoke', async () => {
  const other = await stack.createDatabase('ephdoomed');
  const [viewer, bob] = [stack.role('viewer'), stack.role('bob')];
  await stack.resources.createPolicy('doomed', {
    connection: other.connection,
    mode: 'apply',
    approval: 'auto',
    reconciliation_mode: 'additive',
    roles: [
      { name: viewer, login: false },
      { name: bob, login: true },
    ],
  });
  await stack.reconciled('doomed');
  await eph.create('EphemeralAccessPolicy', 'doomed-auto', {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: `${GRANTED_S}s`,
    memberships: [{ role: viewer, inherit: true }],
    postgresPolicyRef: { name: 'doomed' },
  });
  await activate('target-deleted', undefined, 'doomed-auto', bob);
  expect(await isMember(other, viewer, bob)).toBe(true);
  await stack.resources.deletePolicy('doomed');
  await eph.phase('target-deleted', 'Ended', 40_000);
  expect(await isMember(other, viewer, bob)).toBe(false);
  // Once nothing holds access on it, the policy's deletion completes.
  await waitFor('policy doomed gone', async () => (await stack.resources.policy('doomed')) === undefined, {
    timeoutMs: 30_000,
  });
}, 120_000);

test('a request whose finalizer a tenant removed by hand and then deleted is still revoked by the sweep', async () => {
  await activate('unhooked', '30m');
  // Access held the proper way on the same target and bundle role: the sweep must leave it alone.
  await activate('held', '30m', 'auto', carol);
  expect(await isMember()).toBe(true);
  // The tenant is faster than the scheduler (which would put the finalizer back): modelled by stopping it.
  await stack.stopServices(['access-scheduler']);
  try {
    // What a tenant with update on requests may do: drop the finalizer, then delete; no revoke runs for it.
    await kubectl.ok([
      'patch',
      'ephemeralaccessrequest',
      'unhooked',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]);
    await kubectl.ok(['delete', 'ephemeralaccessrequest', 'unhooked', '--wait=false']);
    await waitFor('unhooked gone', async () => (await eph.request('unhooked')) === undefined, {
      timeoutMs: 30_000,
    });
    expect(await isMember()).toBe(true);
  } finally {
    await stack.startServices(['access-scheduler']);
  }
  // The rebuild (at start, then every REBUILD_MS here) sweeps the target: an edge of a bundle role that no
  // anchored request holds and the policy does not declare is revoked.
  await waitFor('the orphaned membership revoked', async () => !(await isMember()), { timeoutMs: 30_000 });
  expect(await isMember(db, reader, carol)).toBe(true);
  expect((await eph.request('held'))?.status?.phase).toBe('Active');
  await eph.delete('EphemeralAccessRequest', 'held');
}, 90_000);

test('deleting the activation plan of an Active request (its provenance anchor) does not keep the access', async () => {
  const active = await activate('unanchored', '30m');
  expect(await isMember()).toBe(true);
  // Before the sweep the revoke was then refused (NoActivationAnchor) and the edge stayed for ever.
  await kubectl.ok(['delete', 'postgrespolicyplan', scopedName(active, 'activate'), '--wait=false']);
  await waitFor('the unanchored membership revoked', async () => !(await isMember()), { timeoutMs: 30_000 });
  await eph.delete('EphemeralAccessRequest', 'unanchored');
  await waitFor('unanchored gone', async () => (await eph.request('unanchored')) === undefined, {
    timeoutMs: 30_000,
  });
  expect(await isMember()).toBe(false);
}, 90_000);

test('a revoke plan forged exactly, with status Applied, releases the request but not the membership', async () => {
  const active = await activate('forged-revoke', '30m');
  expect(await isMember()).toBe(true);
  // A copy of the scheduler's activation plan (origin, scope and controller owner as the scheduler writes
  // them) under the revoke plan's name, then marked Applied: indistinguishable through the API (ADR 0020).
  const activation = await stack.resources.plan(scopedName(active, 'activate'));
  const {
    name: _n,
    namespace: _ns,
    uid: _u,
    resourceVersion: _rv,
    creationTimestamp: _c,
    ...kept
  } = activation!.metadata as Record<string, unknown>;
  const forged = {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: { ...kept, name: scopedName(active, 'revoke'), managedFields: undefined },
    spec: { ...activation!.spec, scope: { ...activation!.spec.scope, operation: 'Revoke' } },
  };
  await kubectl.ok(['apply', '-f', '-'], JSON.stringify(forged));
  await kubectl.ok([
    'patch',
    'postgrespolicyplan',
    scopedName(active, 'revoke'),
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"phase":"Applied"}}',
  ]);
  await eph.delete('EphemeralAccessRequest', 'forged-revoke');
  await waitFor('forged-revoke gone', async () => (await eph.request('forged-revoke')) === undefined, {
    timeoutMs: 30_000,
  });
  // The scheduler took the forged plan as the record of a revoke (the known gap); the sweep revokes.
  await waitFor('the membership revoked by the sweep', async () => !(await isMember()), {
    timeoutMs: 30_000,
  });
}, 90_000);
