// One namespace must not block or probe another through conflict detection (issue 25, item 7): a tenant of
// namespace B names A's database address and role names, with credentials that do not log in, before and
// after A's policy exists. Driven with kubectl as each namespace's user; ADR 0024.
import { Kubectl } from './support/kubectl.js';
import { applyPolicy, conditionOf, waitEvent, waitLastError, waitReady } from './support/peer.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const TENANT_A = 'tenant-alpha';
const TENANT_B = 'tenant-bravo';
const A_POLICY = 'alpha-owner-policy';
const CONNECTION = 'alpha-db';

let stack: Stack;
let db: TargetDatabase;
let a: Kubectl;
let b: Kubectl;

beforeAll(async () => {
  stack = await startStack({ namespace: TENANT_A });
  db = await stack.createDatabase('tenancy', CONNECTION);
  a = new Kubectl(() => stack.emulator.kubeconfigPath, TENANT_A);
  b = new Kubectl(() => stack.emulator.kubeconfigPath, TENANT_B);
}, 45_000);

afterAll(async () => {
  a?.dispose();
  b?.dispose();
  await stack?.stop();
});

/** A's address with a user that does not exist: the server refuses the login (SQLSTATE 28000). */
function strangerUrl(): string {
  const url = new URL(db.url);
  url.username = 'no_such_login_role';
  url.password = 'guessed';
  return url.toString();
}

/** Everything namespace B can read about its own policy and its Events, as one text. */
async function visibleToB(policy: string): Promise<string> {
  const status = await b.ok(['get', 'pgr', policy, '-o', 'jsonpath={.status}']);
  const events = await b.ok(['get', 'events', '-o', 'json']);
  return `${status}\n${events}`;
}

const appRole = () => stack.role('alpha_app');
const hiddenRole = () => stack.role('alpha_hidden');

test('a claim squatted by another namespace with credentials that never log in does not make A yield', async () => {
  await b.upsertSecret('squat-db', { DATABASE_URL: strangerUrl() });
  // B comes first, so it is the senior claim on A's address and roles.
  await applyPolicy(b, 'squatter-policy', {
    connection: { secretRef: { name: 'squat-db' } },
    interval: '5m',
    roles: [{ name: appRole(), login: true }],
  });
  await waitReady(b, 'squatter-policy', 'False', 'DatabaseConnectionFailed');

  await applyPolicy(a, A_POLICY, {
    connection: { secretRef: { name: CONNECTION } },
    interval: '5m',
    approval: 'auto',
    roles: [{ name: appRole(), login: true }, { name: hiddenRole() }],
  });
  await waitReady(a, A_POLICY, 'True', undefined, 60_000);
  expect((await conditionOf(a, A_POLICY, 'Conflict')).status).not.toBe('True');
  const roles = await db.sql<{ rolname: string }>(
    'SELECT rolname FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname',
    [[appRole(), hiddenRole()]],
  );
  expect(roles.map((r) => r.rolname)).toEqual([appRole(), hiddenRole()].sort());
}, 120_000);

test('a later probe from another namespace with bad credentials learns nothing of A and A keeps converging', async () => {
  await applyPolicy(b, 'prober-policy', {
    connection: { secretRef: { name: 'squat-db' } },
    interval: '5m',
    roles: [{ name: appRole() }],
  });
  // Its own connection fails: that is all it is told.
  await waitReady(b, 'prober-policy', 'False', 'DatabaseConnectionFailed');
  const seen = await visibleToB('prober-policy');
  expect(seen).not.toContain(TENANT_A);
  expect(seen).not.toContain(A_POLICY);
  expect(seen).not.toContain(hiddenRole());
  expect((await conditionOf(b, 'prober-policy', 'Conflict')).status).not.toBe('True');

  // A still reconciles after the probe exists (a forced pass handled, Ready, no Conflict).
  const stamp = new Date().toISOString();
  await a.ok(['annotate', '--overwrite', 'pgr', A_POLICY, `rolepolicy.io/reconcile-requested-at=${stamp}`]);
  await waitReady(a, A_POLICY, 'True');
  await waitFor(
    'the forced pass of A handled',
    async () => (await a.jsonpath('pgr', A_POLICY, '{.status.lastHandledReconcileAt}')) === stamp,
    { timeoutMs: 45_000, intervalMs: 250 },
  );
  expect((await conditionOf(a, A_POLICY, 'Conflict')).status).not.toBe('True');
}, 120_000);

test('a real cross-namespace conflict (B logs in) makes the later B yield without naming A', async () => {
  await b.upsertSecret('shared-db', { DATABASE_URL: db.url });
  await applyPolicy(b, 'late-sharer-policy', {
    connection: { secretRef: { name: 'shared-db' } },
    interval: '5m',
    roles: [{ name: appRole() }],
  });
  await waitReady(b, 'late-sharer-policy', 'False', 'ConflictingPolicy');
  await waitEvent(b, 'late-sharer-policy', 'ConflictDetected');
  await waitLastError(b, 'late-sharer-policy', 'another namespace');
  const seen = await visibleToB('late-sharer-policy');
  expect(seen).not.toContain(TENANT_A);
  expect(seen).not.toContain(A_POLICY);
  expect(seen).not.toContain(hiddenRole());
  await waitReady(a, A_POLICY, 'True');
}, 120_000);
