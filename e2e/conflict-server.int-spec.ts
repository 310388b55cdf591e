// Roles are server-wide, databases are not (issue 28, ADR 0027): 20 databases of ONE PostgreSQL server, each
// with a policy declaring the same two roles and one of its own, created at once and run by two executors.
// Exactly one policy (the senior) owns the shared roles, the other 19 show Conflict and create nothing; a
// second policy per database claiming a schema of the same name everywhere (another schema in each
// database) converges on all 20. No execute message fails and is redelivered (no 23505 in pg_auth_members or
// pg_authid), and every applied plan ran once.
import { metricSums } from './support/metrics.js';
import { watchExecuteResults, type ExecuteResultWatch } from './support/stream.js';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const DATABASES = 20;

let stack: Stack;
let watch: ExecuteResultWatch;

beforeAll(async () => {
  stack = await startStack({ executors: 2, env: { EXECUTOR_CONCURRENCY: '4' } });
  watch = await watchExecuteResults(stack.nats.url);
}, 45_000);

afterAll(async () => {
  await watch?.close();
  await stack?.stop();
}, 120_000);

const shared = () => [stack.role('shared_app'), stack.role('shared_reader')];
const own = (i: number) => stack.role(`d${i}_own`);

/** The policy that fights over the server's roles: two shared ones, one of its own, a membership edge. */
function sharedSpec(db: TargetDatabase, i: number): Record<string, unknown> {
  const [app, reader] = shared();
  return {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: app, login: true }, { name: reader }, { name: own(i) }],
    memberships: [{ role: reader!, members: [{ name: own(i) }, { name: app }] }],
  };
}

/** A policy of one database only: schema `app` (every database has one) and a role of its own. */
function schemaSpec(db: TargetDatabase, i: number): Record<string, unknown> {
  return {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    role_pattern: `${stack.role(`d${i}_`)}{schema}_{profile}`,
    profiles: {
      viewer: { grants: [{ object: { type: 'schema' }, privileges: ['USAGE'] }] },
    },
    schemas: [{ name: 'app', profiles: ['viewer'] }],
  };
}

test(`${DATABASES} databases of one server: one owner per role, the others Conflict, nothing redelivered`, async () => {
  const dbs = await Promise.all(
    Array.from({ length: DATABASES }, async (_, i) => {
      const db = await stack.createDatabase(`srv${i}`);
      await db.sql('CREATE SCHEMA app');
      return db;
    }),
  );
  await Promise.all(
    dbs.flatMap((db, i) => [
      stack.resources.createPolicy(`shared-${i}`, sharedSpec(db, i)),
      stack.resources.createPolicy(`schema-${i}`, schemaSpec(db, i)),
    ]),
  );
  const created = await Promise.all(dbs.map(async (_, i) => (await stack.resources.policy(`shared-${i}`))!));
  // Seniority: creation time, then namespace/name (the planner's order).
  const senior = [...created].sort(
    (a, b) =>
      Date.parse(a.metadata!.creationTimestamp as unknown as string) -
        Date.parse(b.metadata!.creationTimestamp as unknown as string) ||
      (a.metadata!.name! < b.metadata!.name! ? -1 : 1),
  )[0]!.metadata!.name!;
  const ownerIndex = Number(senior.replace('shared-', ''));

  await stack.reconciled(senior, 90_000);
  for (let i = 0; i < DATABASES; i++) await stack.reconciled(`schema-${i}`, 90_000);
  const [app, reader] = shared();
  for (let i = 0; i < DATABASES; i++) {
    if (i === ownerIndex) continue;
    const yielded = await waitFor(
      `shared-${i} yields with Conflict`,
      async () => {
        const policy = await stack.resources.policy(`shared-${i}`);
        return condition(policy?.status?.conditions, 'Conflict')?.status === 'True' ? policy : undefined;
      },
      { timeoutMs: 60_000, describe: async () => (await stack.resources.policy(`shared-${i}`))?.status },
    );
    const conditions = yielded.status?.conditions;
    expect(condition(conditions, 'Conflict')).toMatchObject({ status: 'True', reason: 'ConflictingPolicy' });
    expect(condition(conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'ConflictingPolicy' });
    const message = condition(conditions, 'Conflict')?.message ?? '';
    expect(message).toMatch(
      /^an earlier policy already manages these roles on the same PostgreSQL server \(roles are server-wide\): /,
    );
    expect(message).toContain(`${stack.namespace}/${senior} (roles: ${app}, ${reader}; schemas: -)`);
    // It planned nothing: no plan, and its own role was never created.
    expect(await stack.resources.plans(`shared-${i}`)).toEqual([]);
  }

  // The database's side: the owner's roles and edges only.
  const [first] = dbs;
  const roles = await first!.sql<{ rolname: string }>(
    `SELECT rolname FROM pg_roles WHERE rolname LIKE $1 AND rolname LIKE '%\\_own' ORDER BY 1`,
    [`${stack.rolePrefix}%`],
  );
  expect(roles.map((r) => r.rolname)).toEqual([own(ownerIndex)]);
  const members = await first!.sql<{ member: string }>(
    `SELECT m.rolname AS member FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid
       JOIN pg_roles m ON m.oid = a.member WHERE r.rolname = $1 ORDER BY 1`,
    [reader],
  );
  expect(members.map((m) => m.member).sort()).toEqual([app!, own(ownerIndex)].sort());

  // No execution collided with another session (a collision is nak-ed and redelivered; before ADR 0027 role DDL
  // of two databases of one server did), and every applied plan ran once. (A request redelivered because its
  // plan was not visible yet in a loaded run is another matter and is not counted here.)
  const executors = stack.services.filter((s) => s.name === 'executor');
  expect(executors).toHaveLength(2);
  for (const executor of executors) {
    expect(await metricSums(executor.url, 'rp_executor_collisions_total', 'kind')).toEqual({});
  }
  const executed = new Map<string, number>();
  for (const r of watch.results) {
    if (r.phase === 'Applied' && r.reason === 'Executed') {
      executed.set(r.plan.name, (executed.get(r.plan.name) ?? 0) + 1);
    }
  }
  expect(executed.size).toBe(DATABASES + 1);
  expect([...executed.values()].every((n) => n === 1)).toBe(true);
}, 180_000);
