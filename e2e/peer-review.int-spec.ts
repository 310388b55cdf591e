// The peer operator's end-to-end scenarios around review, in our API and driven with kubectl: legacy
// `mode: plan`, observe mode with an approval that never executes and the admission rules that keep a
// recorded decision terminal (even for the cluster's admin), a connection Secret rotated to a dead
// port and back, params-mode credentials rotated, and a 253-character dotted policy name.
import { freePort } from '@rolepolicy/testing';
import { Kubectl } from './support/kubectl.js';
import {
  applyPolicy,
  conditionOf,
  decidePlan,
  PGPLAN,
  PGR,
  waitCondition,
  waitEvent,
  waitPlanRef,
  waitReady,
} from './support/peer.js';
import { startStack, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
let k: Kubectl;

const CONNECTION = 'postgres-credentials';
const connection = { secretRef: { name: CONNECTION } };

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('peer_review', CONNECTION);
  k = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
}, 45_000);

afterAll(async () => {
  k?.dispose();
  await stack?.stop();
});

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

function urlWith(change: { port?: number }): string {
  const url = new URL(db.url);
  if (change.port !== undefined) url.port = String(change.port);
  return url.toString();
}

test('mode: plan is accepted and kept as written; it plans and never executes on its own (ADR 0002)', async () => {
  const user = stack.role('legacy_plan_mode_user');
  await applyPolicy(k, 'legacy-plan-mode-policy', {
    connection,
    mode: 'plan',
    interval: '30s',
    roles: [{ name: user, login: false }],
  });
  await waitReady(k, 'legacy-plan-mode-policy', 'True', 'Planned');
  expect(await k.jsonpath(PGR, 'legacy-plan-mode-policy', '{.spec.mode}')).toBe('plan');
  const plan = await waitPlanRef(k, 'legacy-plan-mode-policy');
  expect(await k.jsonpath(PGPLAN, plan, '{.status.phase}')).toBe('Pending');
  expect(await roleExists(user)).toBe(false);
  await k.ok(['delete', PGR, 'legacy-plan-mode-policy', '--wait=true']);
});

test('observe: drift is planned, an approval never executes, and a recorded decision cannot be rewritten', async () => {
  const user = stack.role('observe-preview-user');
  await applyPolicy(k, 'observe-policy', {
    connection,
    approval: 'manual',
    interval: '5m',
    mode: 'observe',
    roles: [{ name: user, login: true, comment: 'preview-only role' }],
    grants: [{ role: user, privileges: ['CONNECT'], object: { type: 'database', name: db.database } }],
  });
  await waitReady(k, 'observe-policy', 'True', 'Planned');
  await waitCondition(k, 'observe-policy', 'Drifted', 'True');
  expect(await k.jsonpath(PGR, 'observe-policy', '{.status.last_reconcile_mode}')).toBe('observe');
  const plan = await waitPlanRef(k, 'observe-policy');
  expect(await k.jsonpath(PGPLAN, plan, '{.status.sqlInline}')).toContain(`CREATE ROLE "${user}"`);
  expect(await roleExists(user)).toBe(false);
  await waitEvent(k, 'observe-policy', 'DriftDetected');

  expect((await conditionOf(k, 'observe-policy', 'ApprovalIgnored')).status).toBe('');
  await decidePlan(k, plan, 'Approved', 'e2e-reviewer');
  await waitCondition(k, 'observe-policy', 'ApprovalIgnored', 'True');
  await waitEvent(k, 'observe-policy', 'ApprovalIgnored');
  expect(await roleExists(user)).toBe(false);

  // Removing an annotation changes nothing: a decision lives in status and is terminal.
  await k.ok(['annotate', PGPLAN, plan, 'rolepolicy.io/approved-', '--overwrite']);
  await waitCondition(k, 'observe-policy', 'ApprovalIgnored', 'True');

  const refused = async (patch: unknown, message: string) => {
    const result = await k.run([
      'patch',
      PGPLAN,
      plan,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(patch),
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
  };
  const now = new Date().toISOString();
  await refused(
    {
      status: {
        conditions: [
          // Spelled as the peer's clients send it; the field is not in our schema and is pruned.
          { type: 'Denied', status: 'True', reason: 'Flipped', message: 'flip', lastTransitionTime: now },
        ],
        decidedBy: { username: 'e2e-reviewer' },
      },
    },
    'plan decisions are terminal',
  );
  await refused(
    { status: { decidedBy: { username: 'replacement-reviewer' } } },
    'decision identity is write-once',
  );
  await refused({ status: { changeDigest: 'sha256:forged' } }, 'changeDigest is write-once');
  await refused(
    { status: { targetPhysicalIdentity: '7000000000000000000' } },
    'targetPhysicalIdentity is write-once',
  );
  expect(await k.jsonpath(PGPLAN, plan, '{.status.decidedBy.username}')).toBe('e2e-reviewer');
  expect(await roleExists(user)).toBe(false);
});

test('a rotated connection Secret pointing at a dead port is DatabaseConnectionFailed, and recovers', async () => {
  await k.upsertSecret('rotating-postgres-credentials', { DATABASE_URL: db.url });
  await applyPolicy(k, 'rotated-secret-policy', {
    connection: { secretRef: { name: 'rotating-postgres-credentials' } },
    approval: 'auto',
    interval: '5m',
    roles: [{ name: stack.role('rotated-secret-user'), login: true }],
  });
  await waitReady(k, 'rotated-secret-policy', 'True');
  await k.upsertSecret('rotating-postgres-credentials', {
    DATABASE_URL: urlWith({ port: await freePort() }),
  });
  await waitReady(k, 'rotated-secret-policy', 'False', 'DatabaseConnectionFailed');
  await k.upsertSecret('rotating-postgres-credentials', { DATABASE_URL: db.url });
  await waitReady(k, 'rotated-secret-policy', 'True');
  await waitEvent(k, 'rotated-secret-policy', 'Recovered');
}, 120_000);

test('params connection: a username nobody can log in as is DatabaseConnectionFailed, and recovers', async () => {
  const url = new URL(db.url);
  await k.upsertSecret('params-pg-credentials', { username: 'postgres', password: 'devpassword' });
  const role = stack.role('params-test-role');
  await applyPolicy(k, 'params-e2e-policy', {
    connection: {
      params: {
        host: url.hostname,
        port: Number(url.port || 5432),
        dbname: db.database,
        sslMode: 'disable',
        usernameSecret: { name: 'params-pg-credentials', key: 'username' },
        passwordSecret: { name: 'params-pg-credentials', key: 'password' },
      },
    },
    interval: '15s',
    roles: [{ name: role, login: false }],
    grants: [{ role, privileges: ['CONNECT'], object: { type: 'database', name: db.database } }],
  });
  await waitReady(k, 'params-e2e-policy', 'True');
  expect(await roleExists(role)).toBe(true);

  // The local server trusts every password, so the rotation that breaks the login changes the user.
  await k.upsertSecret('params-pg-credentials', {
    username: stack.role('nobody'),
    password: 'wrongpassword',
  });
  await waitReady(k, 'params-e2e-policy', 'False', 'DatabaseConnectionFailed');
  await k.upsertSecret('params-pg-credentials', { username: 'postgres', password: 'devpassword' });
  await waitReady(k, 'params-e2e-policy', 'True');
  await waitEvent(k, 'params-e2e-policy', 'Recovered');
}, 120_000);

/** 253 characters, dotted; `dotAt` (1-based) is a dot. */
function maxLengthName(dotAt: number): string {
  const labels = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63)];
  const used = 63 * 3 + 3;
  const d = 'd'.repeat(dotAt - used - 1);
  const name = `${labels.join('.')}.${d}.`;
  return name + 'e'.repeat(253 - name.length);
}

test.each([
  ['the dot at byte 215 (where the peer truncates)', maxLengthName(215)],
  ['the dot at byte 236 (where our plan name truncates)', maxLengthName(236)],
])('a 253-character policy name with %s gets a legal plan it owns, labelled within 63', async (_, name) => {
  expect(name).toHaveLength(253);
  await applyPolicy(k, name, {
    connection,
    interval: '5m',
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role(`hostile_${name.length}_${name.indexOf('.d')}`), login: true }],
  });
  await waitReady(k, name, 'True', 'Planned');
  const plan = await waitPlanRef(k, name);
  const policyUid = await k.jsonpath(PGR, name, '{.metadata.uid}');
  const ownerUid = await k.jsonpath(PGPLAN, plan, '{.metadata.ownerReferences[?(@.controller==true)].uid}');
  expect(policyUid).not.toBe('');
  expect(ownerUid).toBe(policyUid);
  expect(plan.length).toBeLessThanOrEqual(253);
  expect(plan).toMatch(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/);
  const label = await k.jsonpath(PGPLAN, plan, '{.metadata.labels.rolepolicy\\.io/policy}');
  expect(label).toHaveLength(63);
  await k.ok(['delete', PGR, name, '--wait=true']);
});
