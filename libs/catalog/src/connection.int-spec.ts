// Connection handling on the real server: SET ROLE once per pooled connection, the spec's setRole
// pattern, timeouts, and credentials never appearing in any error a caller can see.

import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import { sql } from 'kysely';

import { openConnection, withRedaction } from './connection.js';
import { inspect } from './inspect.js';
import { DatabaseError } from './redaction.js';
import { dropRolesWithPrefix, runSql, scopeOf } from './test-support/scope.js';

let sandbox: PostgresSandbox;
const prefix = `rp_${sandboxId()}_`;
const PASSWORD = 'Sup3r-S3cret-Pa55';

beforeAll(async () => {
  sandbox = await createPostgresSandbox('connection');
});

afterAll(async () => {
  await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
  await sandbox.drop();
});

async function failureOf(url: string): Promise<unknown> {
  const connection = openConnection({ url });
  try {
    await withRedaction(connection, () => inspect(connection.db, scopeOf({}), null));
    return null;
  } catch (error) {
    return error;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

function everythingVisible(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return [
    error.message,
    error.stack ?? '',
    String(error),
    JSON.stringify(error),
    JSON.stringify(Object.entries(error)),
  ].join('\n');
}

describe('credentials never appear in errors', () => {
  const cases: readonly [string, string][] = [
    ['refused port', `postgres://postgres:${PASSWORD}@127.0.0.1:1/db`],
    ['unknown database', `postgres://postgres:${PASSWORD}@127.0.0.1:5432/no_such_db_${sandboxId()}`],
    ['unknown user', `postgres://nobody_${sandboxId()}:${PASSWORD}@127.0.0.1:5432/postgres`],
    ['unresolvable host', `postgres://postgres:${PASSWORD}@no-such-host.invalid:5432/db`],
  ];
  it.each(cases)('%s: the error is redacted and carries no password or URL', async (_label, url) => {
    const error = await failureOf(url);
    expect(error).toBeInstanceOf(DatabaseError);
    const visible = everythingVisible(error);
    expect(visible).not.toContain(PASSWORD);
    expect(visible).not.toContain(url);
  });

  it('a malformed URL is rejected without echoing it', () => {
    const url = `postgres://postgres:${PASSWORD}@127.0.0.1:notaport/db`;
    let caught: unknown;
    try {
      openConnection({ url });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DatabaseError);
    expect(everythingVisible(caught)).not.toContain(PASSWORD);
  });
});

describe('connection parts read from a Secret never appear in errors (ADR 0018)', () => {
  const id = sandboxId();
  const cases: readonly [string, Record<string, unknown>, string, string][] = [
    ['user', { host: '127.0.0.1', username: `rp_marker_user_${id}` }, 'username', 'user'],
    ['database', { host: '127.0.0.1', username: 'postgres' }, 'dbname', 'db'],
    ['host', { host: `rp-marker-${id}.invalid` }, 'host', 'host'],
  ];
  it.each(cases)('unknown %s: the error names the Secret and key', async (_label, params, part, key) => {
    const full: Record<string, unknown> = {
      dbname: part === 'dbname' ? `rp_marker_db_${id}` : 'postgres',
      ...params,
    };
    const value = String(full[part]);
    const spec = {
      params: full,
      secretSources: [{ part: part as 'host', secret: 'victim', key }],
    } as unknown as Parameters<typeof openConnection>[0];
    const connection = openConnection(spec);
    let caught: unknown;
    try {
      await withRedaction(connection, () => sql`SELECT 1`.execute(connection.db));
    } catch (error) {
      caught = error;
    } finally {
      await connection.close();
    }
    expect(caught).toBeInstanceOf(DatabaseError);
    const visible = everythingVisible(caught);
    expect(visible).toContain(`[Secret "victim" key "${key}"]`);
    expect(visible.toLowerCase()).not.toContain(value.toLowerCase());
  });
});

describe('setRole', () => {
  it('runs SET ROLE once on every pooled connection, so current_user is the group role', async () => {
    await runSql(sandbox.url, `CREATE ROLE "${prefix}admin"; GRANT "${prefix}admin" TO postgres;`);
    const connection = openConnection({ url: sandbox.url, setRole: `${prefix}admin`, maxConnections: 3 });
    try {
      const users = await Promise.all(
        [1, 2, 3].map(() =>
          connection.db.transaction().execute(async (trx) => {
            const result = await sql<{ user: string }>`SELECT current_user AS user, pg_sleep(0.05)`.execute(
              trx,
            );
            return result.rows[0]!.user;
          }),
        ),
      );
      expect(users).toEqual([`${prefix}admin`, `${prefix}admin`, `${prefix}admin`]);
    } finally {
      await connection.close();
    }
  });

  it("refuses a setRole outside the spec's pattern (a principal with @ or .)", () => {
    expect(() => openConnection({ url: sandbox.url, setRole: 'user@example.com' })).toThrow(DatabaseError);
    expect(() => openConnection({ url: sandbox.url, setRole: 'x"; DROP ROLE y; --' })).toThrow(DatabaseError);
  });

  it('statement_timeout and lock_timeout defaults are set on the session', async () => {
    const connection = openConnection({
      params: { host: '127.0.0.1', dbname: sandbox.database, username: 'postgres' },
    });
    try {
      const result = await sql<{ st: string; lt: string }>`
        SELECT current_setting('statement_timeout') AS st, current_setting('lock_timeout') AS lt`.execute(
        connection.db,
      );
      expect(result.rows[0]).toEqual({ st: '1min', lt: '10s' });
      expect(connection.target).toEqual({ host: '127.0.0.1', port: 5432, database: sandbox.database });
    } finally {
      await connection.close();
    }
  });
});

describe('a target that drops the connection', () => {
  it('a held connection terminated between queries does not crash the process; the next query works', async () => {
    const connection = openConnection({ url: sandbox.url });
    const admin = openConnection({ url: sandbox.url });
    try {
      const failure = await connection.db
        .connection()
        .execute(async (held) => {
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(held);
          await sql`SELECT pg_terminate_backend(${rows[0]?.pid})`.execute(admin.db);
          // The termination notice arrives while no query is running on the held client.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await sql`SELECT 1`.execute(held);
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(Error);
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(connection.db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await connection.close().catch(() => undefined);
      await admin.close();
    }
  });
});
