// The server's role lock (ADR 0027) on the real server: two executions on two databases of one server that
// grant the same membership at once. Without the lock the second fails with 23505 (execute.int-spec.ts); with
// it the second waits for the first to commit, and its grant finds the edge (a notice, not an error).
import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeUnderLock } from './execute.js';
import {
  maintenanceLock,
  maintenanceSpec,
  openMaintenanceConnection,
  RoleLockSessions,
} from './server-lock.js';
import { dropRolesWithPrefix, runSql } from './test-support/scope.js';

let one: PostgresSandbox;
let two: PostgresSandbox;
const prefix = `rp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
const plain = (text: string) => ({ sql: text, redacted: text });
/** An advisory key the test holds in database one, so execution A stops after its grant, uncommitted. */
const GATE = 424_242;

beforeAll(async () => {
  one = await createPostgresSandbox('rolelock_one');
  two = await createPostgresSandbox('rolelock_two');
  await runSql(one.url, `CREATE ROLE "${r('shared_role')}"; CREATE ROLE "${r('shared_member')}";`);
});

afterAll(async () => {
  await dropRolesWithPrefix(one.adminUrl, [one.url, two.url], prefix);
  await one.drop();
  await two.drop();
});

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Polls the server's sessions until one matches `where` (a wait the test must see, not a time). */
async function sessionWaiting(where: string, values: unknown[]): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const rows = await query(one.adminUrl, `SELECT 1 FROM pg_stat_activity WHERE ${where}`, values);
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no session ${where}`);
}

test('two databases grant one membership at once: the second waits on the role lock, both apply', async () => {
  const gate = new pg.Client({ connectionString: one.url });
  await gate.connect();
  const connections: CatalogConnection[] = [];
  const open = (url: string) => {
    const target = openConnection({ url, applicationName: 'rolelock-test' });
    const lock = openMaintenanceConnection({ url }, 'postgres', {});
    connections.push(target, lock);
    return { target, lock: maintenanceLock(lock, () => undefined) };
  };
  try {
    await gate.query('SELECT pg_advisory_lock($1)', [GATE]);
    const a = open(one.url);
    const b = open(two.url);
    const grant = plain(`GRANT "${r('shared_role')}" TO "${r('shared_member')}"`);
    const first = executeUnderLock(
      a.target.db,
      async () => ({
        run: true,
        statements: [grant, plain(`SELECT pg_advisory_xact_lock(${GATE})`)],
        result: 'a',
      }),
      a.lock,
    );
    // A granted (uncommitted) and now waits at the gate, holding the role lock.
    await sessionWaiting(`wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%'`, []);
    const second = executeUnderLock(
      b.target.db,
      async () => ({
        run: true,
        statements: [plain(`CREATE ROLE "${r('second_only')}"`), grant],
        result: 'b',
      }),
      b.lock,
    );
    // B decided and waits for the role lock in the maintenance database, before any statement of its own.
    await sessionWaiting(
      `application_name = 'rolepolicy-executor-role-lock' AND wait_event_type = 'Lock'`,
      [],
    );
    expect(
      await query(two.url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [r('second_only')]),
    ).toHaveLength(0);
    await gate.query('SELECT pg_advisory_unlock($1)', [GATE]);
    expect(await Promise.all([first, second])).toEqual(['a', 'b']);
    const edges = await query(
      one.url,
      `SELECT 1 FROM pg_auth_members WHERE roleid = $1::regrole AND member = $2::regrole`,
      [`"${r('shared_role')}"`, `"${r('shared_member')}"`],
    );
    expect(edges).toHaveLength(1);
    expect(
      await query(two.url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [r('second_only')]),
    ).toHaveLength(1);
  } finally {
    await gate.end();
    for (const c of connections) await c.close();
  }
});

test('a plan without role DDL never touches the role lock', async () => {
  // The maintenance "database" does not exist: touching the lock would report it unavailable.
  const unavailable: string[] = [];
  const lockConnection = openMaintenanceConnection({ url: one.url }, `${prefix}no_such_db`, {});
  const target = openConnection({ url: one.url });
  try {
    const lock = maintenanceLock(lockConnection, (state) => unavailable.push(state));
    await executeUnderLock(
      target.db,
      async () => ({ run: true, statements: [plain(`CREATE SCHEMA "${r('objects_only')}"`)], result: null }),
      lock,
    );
    expect(unavailable).toEqual([]);
    // With role DDL it is touched; the database is unusable, so the plan runs without it and says so.
    await executeUnderLock(
      target.db,
      async () => ({ run: true, statements: [plain(`CREATE ROLE "${r('without_lock')}"`)], result: null }),
      lock,
    );
    expect(unavailable).toEqual(['3D000']);
    expect(
      await query(one.url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [r('without_lock')]),
    ).toHaveLength(1);
  } finally {
    await target.close();
    await lockConnection.close();
  }
});

test('the maintenance connection keeps the login and changes only the database', () => {
  expect(maintenanceSpec({ url: 'postgres://u:p@db.example:6432/app?sslmode=require' }, 'postgres')).toEqual({
    url: 'postgres://u:p@db.example:6432/postgres?sslmode=require',
  });
  expect(
    maintenanceSpec(
      { params: { host: 'h', port: 5433, dbname: 'app', username: 'u' }, setRole: 'x' },
      'postgres',
    ),
  ).toEqual({ params: { host: 'h', port: 5433, dbname: 'postgres', username: 'u' }, setRole: 'x' });
});

/** The backend holding the role lock of `role` on the server, or null (pg_locks splits the bigint key). */
async function roleLockHolder(role: string): Promise<number | null> {
  const rows = await query<{ pid: number }>(
    one.adminUrl,
    `SELECT l.pid FROM pg_catalog.pg_locks l,
            LATERAL (SELECT pg_catalog.hashtextextended('rolepolicy:role:' || $1, 0) AS k) x
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.classid = ((x.k >> 32) & 4294967295)::oid AND l.objid = (x.k & 4294967295)::oid`,
    [role],
  );
  return rows[0]?.pid ?? null;
}

describe('role-lock sessions kept between executions', () => {
  test('a second execution with role DDL borrows the first one`s session instead of starting a backend', async () => {
    const sessions = new RoleLockSessions({ unavailable: () => undefined });
    const target = openConnection({ url: one.url });
    const gate = new pg.Client({ connectionString: one.url });
    await gate.connect();
    const holders: (number | null)[] = [];
    try {
      for (const name of ['kept_a', 'kept_b']) {
        await gate.query('SELECT pg_advisory_lock($1)', [GATE]);
        const kept = sessions.acquire({ url: one.url }, 'postgres', {});
        const run = executeUnderLock(
          target.db,
          async () => ({
            run: true,
            statements: [
              plain(`CREATE ROLE "${r(name)}"`),
              plain(`GRANT "${r(name)}" TO "${r('shared_member')}"`),
              plain(`SELECT pg_advisory_xact_lock(${GATE})`),
            ],
            result: null,
          }),
          kept.lock,
        );
        // Held while the plan's transaction waits at the gate: who holds it?
        await sessionWaiting(`wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%'`, []);
        holders.push(await roleLockHolder(r(name)));
        await gate.query('SELECT pg_advisory_unlock($1)', [GATE]);
        await run;
        kept.release();
        // Released after the commit, although the session stays open.
        expect(await roleLockHolder(r(name))).toBeNull();
      }
      expect(holders[0]).not.toBeNull();
      expect(holders[1]).toBe(holders[0]);
      expect(sessions.size).toBe(1);
    } finally {
      await gate.end();
      await target.close();
      await sessions.close();
    }
    // Closed with the executor: the kept backend is gone.
    for (let i = 0; i < 100; i++) {
      const alive = await query(one.adminUrl, 'SELECT 1 FROM pg_stat_activity WHERE pid = $1', [holders[0]]);
      if (alive.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the kept role-lock session was not closed');
  });

  test('a lock that timed out halfway leaves the kept session holding none of the locks it took', async () => {
    const sessions = new RoleLockSessions({ unavailable: () => undefined });
    const target = openConnection({ url: one.url });
    // Another executor holds the second role's lock: the execution gets the first, then times out on it.
    const other = new pg.Client({ connectionString: one.adminUrl });
    await other.connect();
    const spec = { url: one.url, lockTimeoutMs: 300 };
    try {
      await other.query(`SELECT pg_advisory_lock(pg_catalog.hashtextextended('rolepolicy:role:' || $1, 0))`, [
        r('timeout_z'),
      ]);
      const first = sessions.acquire(spec, 'postgres', {});
      const failed = executeUnderLock(
        target.db,
        async () => ({
          run: true,
          statements: [plain(`GRANT "${r('timeout_a')}" TO "${r('timeout_z')}"`)],
          result: null,
        }),
        first.lock,
      );
      await expect(failed).rejects.toMatchObject({ code: '55P03' });
      first.release();
      // The first role's lock went with the failure: nobody holds it, though the session is kept.
      expect(await roleLockHolder(r('timeout_a'))).toBeNull();
      await other.query('SELECT pg_advisory_unlock_all()');
      // The kept session still serves the next execution.
      await runSql(one.url, `CREATE ROLE "${r('timeout_a')}"; CREATE ROLE "${r('timeout_z')}";`);
      const second = sessions.acquire(spec, 'postgres', {});
      await executeUnderLock(
        target.db,
        async () => ({
          run: true,
          statements: [plain(`GRANT "${r('timeout_a')}" TO "${r('timeout_z')}"`)],
          result: null,
        }),
        second.lock,
      );
      second.release();
      expect(sessions.size).toBe(1);
    } finally {
      await other.end();
      await target.close();
      await sessions.close();
    }
  });

  test('another login or namespace never borrows a kept session', async () => {
    const sessions = new RoleLockSessions({ unavailable: () => undefined });
    try {
      const a = sessions.acquire({ url: one.url }, 'postgres', { namespace: 'team-a' });
      const b = sessions.acquire({ url: one.url }, 'postgres', { namespace: 'team-b' });
      const otherLogin = new URL(one.url);
      otherLogin.username = 'other_login';
      otherLogin.password = 'pw';
      const c = sessions.acquire({ url: otherLogin.toString() }, 'postgres', { namespace: 'team-a' });
      const again = sessions.acquire({ url: one.url }, 'postgres', { namespace: 'team-a' });
      // The same connection read from another Secret of the namespace (a fleet: one Secret per database).
      const sameFromSecret = sessions.acquire(
        { url: one.url, secretSources: [{ part: 'url', secret: 'db-7', key: 'DATABASE_URL' }] },
        'postgres',
        { namespace: 'team-a' },
      );
      expect(sessions.size).toBe(3);
      expect(again.lock).toBe(a.lock);
      expect(sameFromSecret.lock).toBe(a.lock);
      expect(new Set([a.lock, b.lock, c.lock]).size).toBe(3);
      for (const kept of [a, b, c, again, sameFromSecret]) kept.release();
    } finally {
      await sessions.close();
    }
  });
});
