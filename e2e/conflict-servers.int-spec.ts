// Several PostgreSQL servers (issue 28, "Several servers"; ADR 0027): two real servers started side by side
// from the pinned embedded package, one stack with two executors in front of both. Roles are per server: the
// same role names on databases of two servers are two sets of roles, each server converging its own (no
// Conflict), while a second database of one server declaring them yields with Conflict to the first. The role
// lock is per server too: with server B's lock on a role name held by a session of this test, a policy on
// server A declaring that name applies at once, and B's waits until the lock is released.
import pg from 'pg';
import { startEmbeddedPostgresServer, type EmbeddedPostgres } from '@rolepolicy/testing';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let serverA: EmbeddedPostgres;
let serverB: EmbeddedPostgres;

beforeAll(async () => {
  [serverA, serverB] = await Promise.all([startEmbeddedPostgresServer(15), startEmbeddedPostgresServer(15)]);
  stack = await startStack({ executors: 2 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.allSettled([serverA?.stop(), serverB?.stop()]);
}, 120_000);

/** A policy declaring `roles` (the first one LOGIN) and an edge between the first two. */
function rolesSpec(db: TargetDatabase, roles: readonly string[]): Record<string, unknown> {
  return {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: roles.map((name, i) => (i === 0 ? { name, login: true } : { name })),
    ...(roles.length > 1 ? { memberships: [{ role: roles[1]!, members: [{ name: roles[0]! }] }] } : {}),
  };
}

async function rolesOn(db: TargetDatabase, names: readonly string[]): Promise<string[]> {
  const rows = await db.sql<{ rolname: string }>(
    'SELECT rolname FROM pg_roles WHERE rolname = ANY($1) ORDER BY 1',
    [names],
  );
  return rows.map((r) => r.rolname);
}

test('the same role names on two servers converge on each; on a second database of one server they Conflict', async () => {
  const shared = [stack.role('app'), stack.role('reader')];
  const onA = await stack.createDatabase('srva0', undefined, serverA.adminUrl);
  const onB = await stack.createDatabase('srvb0', undefined, serverB.adminUrl);
  await Promise.all([
    stack.resources.createPolicy('server-a', rolesSpec(onA, shared)),
    stack.resources.createPolicy('server-b', rolesSpec(onB, shared)),
  ]);
  // Both own the names: on two servers they are two sets of roles, not one fought over.
  for (const name of ['server-a', 'server-b']) {
    const policy = await stack.reconciled(name, 120_000);
    expect(condition(policy.status?.conditions, 'Conflict')?.status ?? 'False').toBe('False');
  }
  expect(await rolesOn(onA, shared)).toEqual([...shared].sort());
  expect(await rolesOn(onB, shared)).toEqual([...shared].sort());
  const edge = `SELECT 1 FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member
                 WHERE r.rolname = $1 AND m.rolname = $2`;
  expect(await onA.sql(edge, [shared[1], shared[0]])).toHaveLength(1);
  expect(await onB.sql(edge, [shared[1], shared[0]])).toHaveLength(1);

  // A second database of server A declaring the same names: server A's roles already have their owner.
  const secondOnA = await stack.createDatabase('srva1', undefined, serverA.adminUrl);
  await stack.resources.createPolicy('server-a-second', rolesSpec(secondOnA, shared));
  const yielded = await waitFor(
    'server-a-second yields with Conflict',
    async () => {
      const policy = await stack.resources.policy('server-a-second');
      return condition(policy?.status?.conditions, 'Conflict')?.status === 'True' ? policy : undefined;
    },
    { timeoutMs: 90_000, describe: async () => (await stack.resources.policy('server-a-second'))?.status },
  );
  expect(condition(yielded.status?.conditions, 'Conflict')).toMatchObject({
    status: 'True',
    reason: 'ConflictingPolicy',
  });
  const message = condition(yielded.status?.conditions, 'Conflict')?.message ?? '';
  expect(message).toMatch(/^an earlier policy already manages these roles on the same PostgreSQL server/);
  // Named is the owner on server A, never the one on server B.
  expect(message).toContain(`${stack.namespace}/server-a `);
  expect(message).not.toContain('server-b');
  expect(await stack.resources.plans('server-a-second')).toEqual([]);
  // Server B's policy is still converged, and neither server's owner was disturbed.
  for (const name of ['server-a', 'server-b']) await stack.reconciled(name, 30_000);
}, 300_000);

test("server B's role lock held: server A's policy on the same role name applies, B's waits for the lock", async () => {
  const locked = stack.role('locked');
  const onA = await stack.createDatabase('lockeda', undefined, serverA.adminUrl);
  const onB = await stack.createDatabase('lockedb', undefined, serverB.adminUrl);
  // The executors' role lock on server B for this name (ADR 0027: one advisory key per role name, held in the
  // server's `postgres` database), held by this session until released.
  const holder = new pg.Client({ connectionString: serverB.adminUrl });
  await holder.connect();
  const lockKey = "hashtextextended('rolepolicy:role:' || $1, 0)";
  try {
    await holder.query(`SELECT pg_advisory_lock(${lockKey})`, [locked]);
    await Promise.all([
      stack.resources.createPolicy('locked-a', rolesSpec(onA, [locked])),
      stack.resources.createPolicy('locked-b', rolesSpec(onB, [locked])),
    ]);
    // Server A never waits for server B's lock.
    await stack.reconciled('locked-a', 120_000);
    expect(await rolesOn(onA, [locked])).toEqual([locked]);
    // Server B's execution is waiting on the lock (seen in pg_stat_activity), and created nothing.
    await waitFor(
      "an executor waits on server B's role lock",
      async () => {
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE application_name = 'rolepolicy-executor-role-lock' AND wait_event_type = 'Lock'
              AND wait_event = 'advisory'`,
        );
        return rows[0]!.n > 0 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(await rolesOn(onB, [locked])).toEqual([]);
  } finally {
    await holder.query(`SELECT pg_advisory_unlock(${lockKey})`, [locked]).catch(() => undefined);
    await holder.end();
  }
  // Released: server B's policy converges (its execution finishes, or its redelivery after lock_timeout).
  await stack.reconciled('locked-b', 120_000);
  expect(await rolesOn(onB, [locked])).toEqual([locked]);
}, 300_000);
