// The peer operator's end-to-end scenarios, in our API and driven with kubectl like a cluster user: several
// policies on one database, a schema owner, a connection Secret pointed at a dead port and back, a
// conflicting policy, an invalid one, database grant targets, a missing connection Secret and a
// management role without CREATEROLE (which must not spin). docs/peer-e2e.md maps each check.
import { freePort } from '@rolepolicy/testing';
import { Kubectl } from './support/kubectl.js';
import {
  applyPolicy,
  conditionOf,
  policyYaml,
  waitCondition,
  waitLastError,
  waitEvent,
  waitReady,
} from './support/peer.js';
import { sleep, startStack, type Stack, type TargetDatabase } from './stack.js';
import { metricSums } from './support/metrics.js';

let stack: Stack;
let db: TargetDatabase;
let k: Kubectl;

const CONNECTION = 'postgres-credentials';

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('peer_op', CONNECTION);
  k = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
}, 45_000);

afterAll(async () => {
  k?.dispose();
  await stack?.stop();
});

const connection = { secretRef: { name: CONNECTION } };

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

/** The connection URL with another port (nothing listens there) or user. */
function urlWith(change: { port?: number; user?: string }): string {
  const url = new URL(db.url);
  if (change.port !== undefined) url.port = String(change.port);
  if (change.user !== undefined) url.username = change.user;
  return url.toString();
}

test('two policies with disjoint roles converge on one database; approval omitted says ApprovalUnset', async () => {
  const analytics = stack.role('analytics');
  const reporting = stack.role('reporting');
  await applyPolicy(k, 'disjoint-policy', {
    connection,
    interval: '5m',
    roles: [{ name: analytics, login: true, comment: 'disjoint same-database role' }],
    grants: [{ role: analytics, privileges: ['CONNECT'], object: { type: 'database', name: db.database } }],
  });
  await waitReady(k, 'disjoint-policy', 'True');
  expect(await roleExists(analytics)).toBe(true);
  await waitCondition(k, 'disjoint-policy', 'ApprovalUnset', 'True');

  await applyPolicy(k, 'second-disjoint-policy', {
    connection,
    interval: '5m',
    roles: [{ name: reporting, login: true }],
    grants: [{ role: reporting, privileges: ['CONNECT'], object: { type: 'database', name: db.database } }],
  });
  await waitReady(k, 'second-disjoint-policy', 'True');
  expect(await roleExists(reporting)).toBe(true);
});

test('a schema with a declared owner is created owned by that role; explicit approval has no ApprovalUnset', async () => {
  const owner = stack.role('schema_owner');
  await applyPolicy(k, 'schema-owner-policy', {
    connection,
    approval: 'auto',
    interval: '5m',
    schemas: [{ name: 'operator_owned_schema', owner, profiles: [] }],
    roles: [{ name: owner }],
  });
  await waitReady(k, 'schema-owner-policy', 'True');
  expect((await conditionOf(k, 'schema-owner-policy', 'ApprovalUnset')).status).toBe('');
  expect(await roleExists(owner)).toBe(true);
  const rows = await db.sql<{ owner: string }>(
    "SELECT pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = 'operator_owned_schema'",
  );
  expect(rows).toEqual([{ owner }]);
});

test('a connection Secret pointed at a dead port: DatabaseConnectionFailed on both policies, then Ready again', async () => {
  await k.upsertSecret(CONNECTION, { DATABASE_URL: urlWith({ port: await freePort() }) });
  await waitReady(k, 'disjoint-policy', 'False', 'DatabaseConnectionFailed');
  await waitReady(k, 'second-disjoint-policy', 'False', 'DatabaseConnectionFailed');

  await k.upsertSecret(CONNECTION, { DATABASE_URL: db.url });
  await waitReady(k, 'disjoint-policy', 'True');
  await waitReady(k, 'second-disjoint-policy', 'True');
}, 120_000);

test('a later policy claiming a role another policy owns is ConflictingPolicy', async () => {
  await applyPolicy(k, 'conflicting-policy', {
    connection,
    interval: '5m',
    roles: [{ name: stack.role('analytics'), login: true, comment: 'overlaps disjoint-policy' }],
  });
  await waitReady(k, 'conflicting-policy', 'False', 'ConflictingPolicy');
  expect((await conditionOf(k, 'conflicting-policy', 'Conflict')).status).toBe('True');
  await waitEvent(k, 'conflicting-policy', 'ConflictDetected');
});

test('a schema binding naming an undefined profile is InvalidSpec', async () => {
  await applyPolicy(k, 'invalid-policy', {
    connection,
    interval: '5m',
    schemas: [{ name: 'reporting', profiles: ['missing-profile'] }],
  });
  await waitReady(k, 'invalid-policy', 'False', 'InvalidSpec');
  await waitLastError(k, 'invalid-policy', 'missing-profile');
});

test('database grants: admission refuses one without a name; one naming another database is InvalidDatabaseTarget', async () => {
  const unnamed = await k.apply(
    policyYaml('unnamed-database-target-policy', {
      connection,
      grants: [{ role: 'PUBLIC', ensure: 'absent', privileges: ['CONNECT'], object: { type: 'database' } }],
    }),
  );
  expect(unnamed.code).not.toBe(0);
  expect(unnamed.stderr).toContain('database grant targets must set name');

  await applyPolicy(k, 'invalid-database-target-policy', {
    connection,
    interval: '5m',
    grants: [
      {
        role: 'PUBLIC',
        ensure: 'absent',
        privileges: ['CONNECT'],
        object: { type: 'database', name: 'not_the_connected_database' },
      },
    ],
  });
  await waitReady(k, 'invalid-database-target-policy', 'False', 'InvalidDatabaseTarget');
  await waitLastError(
    k,
    'invalid-database-target-policy',
    // The connected database's name came from the connection Secret: named by Secret and key (ADR 0018).
    `does not match connected database "[Secret "${CONNECTION}" key "DATABASE_URL"]"`,
  );
});

test('a connection Secret that does not exist is SecretFetchFailed', async () => {
  await applyPolicy(k, 'missing-secret-policy', {
    connection: { secretRef: { name: 'does-not-exist' } },
    interval: '5m',
    roles: [{ name: stack.role('missing-secret-user'), login: true }],
  });
  await waitReady(k, 'missing-secret-policy', 'False', 'SecretFetchFailed');
  await waitLastError(k, 'missing-secret-policy', 'does-not-exist');
  await waitEvent(k, 'missing-secret-policy', 'SecretFetchFailed');
});

test('a management role without CREATEROLE: PlanRetryDeferred carrying the SQL error, no role, and no spin', async () => {
  const limited = stack.role('limited');
  await db.sql(`CREATE ROLE "${limited}" LOGIN NOCREATEROLE`);
  await k.upsertSecret('limited-postgres-credentials', { DATABASE_URL: urlWith({ user: limited }) });
  const user = stack.role('insufficient-privileges-user');
  await applyPolicy(k, 'insufficient-privileges-policy', {
    connection: { secretRef: { name: 'limited-postgres-credentials' } },
    interval: '5m',
    roles: [{ name: user, login: true, comment: 'fails: the management role lacks CREATEROLE' }],
  });
  await waitReady(k, 'insufficient-privileges-policy', 'False', 'PlanRetryDeferred');
  await waitLastError(k, 'insufficient-privileges-policy', 'permission denied to create role');
  expect(await roleExists(user)).toBe(false);

  // A failing policy is not re-planned on its own writes: over 20 s the planner's pass counter (all
  // policies of this stack, every other one idle at its 5m interval) moves by a handful at most.
  const planner = stack.services.find((s) => s.name === 'planner')!;
  const before = await plannerPasses(planner.url);
  expect(before).toBeGreaterThan(0);
  await sleep(20_000);
  const after = await plannerPasses(planner.url);
  expect(after - before).toBeLessThanOrEqual(5);
  expect(await roleExists(user)).toBe(false);
}, 120_000);

/** Sum of `rp_planner_reconcile_seconds_count` over every decision label. */
async function plannerPasses(base: string): Promise<number> {
  const sums = await metricSums(base, 'rp_planner_reconcile_seconds_count');
  return sums['total'] ?? 0;
}
