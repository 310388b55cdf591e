// Plan execution on the real server: one transaction under the per-database advisory lock; a failed
// statement mid-plan rolls everything back and the error names the redacted statement and its SQLSTATE.

import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import { sql } from 'kysely';
import pg from 'pg';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeStatements, executeUnderLock, ExecutionError } from './execute.js';
import { dropRolesWithPrefix, runSql } from './test-support/scope.js';

let sandbox: PostgresSandbox;
let connection: CatalogConnection;
const prefix = `rp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
const plain = (text: string) => ({ sql: text, redacted: text });

beforeAll(async () => {
  sandbox = await createPostgresSandbox('execute');
  connection = openConnection({ url: sandbox.url });
});

afterAll(async () => {
  await connection.close();
  await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
  await sandbox.drop();
});

async function roleExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: sandbox.url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name]);
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

describe('plan execution', () => {
  it('runs every statement in one transaction and commits', async () => {
    await executeStatements(connection.db, [
      plain(`CREATE ROLE "${r('a')}"`),
      plain(`CREATE SCHEMA "${r('s')}" AUTHORIZATION "${r('a')}"`),
    ]);
    expect(await roleExists(r('a'))).toBe(true);
  });

  it('a failed statement mid-plan (a role dropped concurrently) leaves the database unchanged', async () => {
    await runSql(sandbox.url, `CREATE ROLE "${r('doomed')}"; DROP ROLE "${r('doomed')}";`);
    const statements = [
      plain(`CREATE ROLE "${r('fresh')}"`),
      plain(`GRANT "${r('fresh')}" TO "${r('doomed')}"`),
      plain(`CREATE ROLE "${r('never')}"`),
    ];
    const error = await executeStatements(connection.db, statements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionError);
    const failure = error as ExecutionError;
    expect(failure.sqlState).toBe('42704');
    expect(failure.statementIndex).toBe(1);
    expect(failure.statement).toBe(`GRANT "${r('fresh')}" TO "${r('doomed')}"`);
    expect(failure.message).toContain('SQLSTATE 42704');
    expect(failure.message).toContain(`GRANT "${r('fresh')}" TO "${r('doomed')}"`);
    expect(await roleExists(r('fresh'))).toBe(false);
    expect(await roleExists(r('never'))).toBe(false);
  });

  it('the error names the failing statement once, without a doubled semicolon', async () => {
    const error = await executeStatements(connection.db, [plain(`DROP ROLE "${r('absent')}";`)]).catch(
      (e: unknown) => e,
    );
    expect((error as ExecutionError).message).toContain(
      `statement: DROP ROLE "${r('absent')}"; the transaction was rolled back`,
    );
  });

  it('a failing grouped statement of 1,000 objects is named in a bounded message', async () => {
    const objects = Array.from({ length: 1000 }, (_, i) => `"${r('missing')}"."t${i}"`).join(', ');
    const text = `GRANT SELECT ON TABLE ${objects} TO PUBLIC;`;
    const error = await executeStatements(connection.db, [plain(text)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionError);
    const failure = error as ExecutionError;
    expect(failure.sqlState).toBe('3F000');
    expect(failure.statement).toBe(text);
    expect(failure.message.length).toBeLessThan(1500);
    expect(failure.message).toContain(`statement: GRANT SELECT ON TABLE "${r('missing')}"."t0", `);
    expect(failure.message).toMatch(/\.\.\. \[\d+ more characters\]; the transaction was rolled back$/);
  });

  it('a failing statement that carries a secret is reported only in its redacted form', async () => {
    const secret = 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy';
    const error = await executeStatements(connection.db, [
      {
        sql: `ALTER ROLE "${r('ghost')}" PASSWORD '${secret}'`,
        redacted: `ALTER ROLE "${r('ghost')}" PASSWORD '[REDACTED]'`,
      },
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionError);
    const failure = error as ExecutionError;
    expect(failure.sqlState).toBe('42704');
    expect(`${failure.message}\n${failure.stack}\n${JSON.stringify(failure)}`).not.toContain(secret);
    expect(failure.message).toContain(`PASSWORD '[REDACTED]'`);
  });

  it('appliers of one database serialise on the advisory lock: the second prepares after the first commits', async () => {
    const order: string[] = [];
    let releaseFirst: () => void = () => undefined;
    const firstHolds = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstLocked: () => void = () => undefined;
    const lockedSignal = new Promise<void>((resolve) => {
      firstLocked = resolve;
    });
    const first = executeUnderLock(connection.db, async () => {
      order.push('first prepares');
      firstLocked();
      await firstHolds;
      order.push('first runs');
      return { run: true, statements: [plain(`CREATE ROLE "${r('first')}"`)], result: undefined };
    });
    await lockedSignal;
    const second = executeUnderLock(connection.db, async () => {
      order.push('second prepares');
      return { run: false, result: undefined };
    });
    // Give the second applier every chance to (wrongly) get in before the first releases.
    await new Promise((resolve) => setTimeout(resolve, 200));
    order.push('first released');
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first prepares', 'first released', 'first runs', 'second prepares']);
  });

  it('prepare reads on the session holding the lock, and sees what the previous holder committed', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => undefined;
    const lockedSignal = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const first = executeUnderLock(connection.db, async () => {
      locked();
      await held;
      return { run: true, statements: [plain(`CREATE ROLE "${r('committed_first')}"`)], result: undefined };
    });
    await lockedSignal;
    const second = executeUnderLock(connection.db, async (session) => {
      const seen = await sql<{ seen: boolean; holds: boolean }>`
        SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${r('committed_first')}) AS seen,
               EXISTS (SELECT 1 FROM pg_catalog.pg_locks
                       WHERE locktype = 'advisory' AND granted AND pid = pg_catalog.pg_backend_pid()) AS holds`.execute(
        session,
      );
      return { run: false, result: seen.rows[0] };
    });
    release();
    await first;
    expect(await second).toEqual({ seen: true, holds: true });
  });

  it('the lock is free again after prepare throws and after a statement fails', async () => {
    const lockFree = async (): Promise<boolean> => {
      const client = new pg.Client({ connectionString: sandbox.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ got: boolean }>(
          `SELECT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtextextended('rolepolicy:' || pg_catalog.current_database(), 0)) AS got`,
        );
        return rows[0]!.got;
      } finally {
        await client.end();
      }
    };
    await expect(
      executeUnderLock(connection.db, async () => {
        throw new Error('prepare failed on purpose');
      }),
    ).rejects.toThrow('prepare failed on purpose');
    expect(await lockFree()).toBe(true);
    await expect(executeStatements(connection.db, [plain('SELECT 1/0')])).rejects.toBeInstanceOf(
      ExecutionError,
    );
    expect(await lockFree()).toBe(true);
  });

  it('afterCommit reads the committed state while still holding the lock; its failure changes nothing', async () => {
    let after: { seen: boolean; holds: boolean } | undefined;
    const result = await executeUnderLock(connection.db, async () => ({
      run: true,
      statements: [plain(`CREATE ROLE "${r('after_commit')}"`)],
      result: 'applied',
      afterCommit: async (session) => {
        const read = await sql<{ seen: boolean; holds: boolean }>`
          SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${r('after_commit')}) AS seen,
                 EXISTS (SELECT 1 FROM pg_catalog.pg_locks
                         WHERE locktype = 'advisory' AND granted AND pid = pg_catalog.pg_backend_pid()) AS holds`.execute(
          session,
        );
        after = read.rows[0];
      },
    }));
    expect(result).toBe('applied');
    expect(after).toEqual({ seen: true, holds: true });

    const failing = await executeUnderLock(connection.db, async () => ({
      run: true,
      statements: [plain(`CREATE ROLE "${r('after_commit_failing')}"`)],
      result: 'applied',
      afterCommit: async () => {
        throw new Error('the read after the commit failed');
      },
    }));
    expect(failing).toBe('applied');
    expect(await roleExists(r('after_commit_failing'))).toBe(true);
  });
});

describe('two databases of one server', () => {
  it('granting the same membership from both at once: the loser fails as a concurrent update, nothing kept', async () => {
    const other = await createPostgresSandbox('execute_other');
    const otherConnection = openConnection({ url: other.url });
    const holder = new pg.Client({ connectionString: sandbox.url });
    try {
      await runSql(sandbox.url, `CREATE ROLE "${r('shared_role')}"; CREATE ROLE "${r('shared_member')}";`);
      // The first session grants without committing; the per-database lock of the other database does not
      // see it, so the second grant waits on the catalog's unique index and fails once the first commits.
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query(`GRANT "${r('shared_role')}" TO "${r('shared_member')}"`);
      const second = executeStatements(otherConnection.db, [
        plain(`CREATE ROLE "${r('second_only')}"`),
        plain(`GRANT "${r('shared_role')}" TO "${r('shared_member')}"`),
      ]).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await holder.query('COMMIT');
      const error = await second;
      expect(error).toBeInstanceOf(ExecutionError);
      expect((error as ExecutionError).sqlState).toBe('23505');
      expect((error as ExecutionError).concurrentUpdate).toBe(true);
      // Rolled back as a whole: running it again is safe.
      expect(await roleExists(r('second_only'))).toBe(false);
    } finally {
      await holder.end();
      await otherConnection.close();
      await other.drop();
    }
  });

  it('a statement that fails on its own is not a concurrent update', async () => {
    const error = await executeStatements(connection.db, [
      plain(`GRANT "${r('no_such_role')}" TO "${r('nobody')}"`),
    ]).catch((e: unknown) => e);
    expect((error as ExecutionError).concurrentUpdate).toBe(false);
  });
});
