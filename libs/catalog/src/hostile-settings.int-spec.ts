// The hostile-settings corpus on the real server: what a database owner (or whoever may ALTER ROLE the
// executor) can set for the executor's sessions, each proven not to change the statements the server runs.

import {
  computePlan,
  deriveManagedScope,
  expandPolicy,
  renderSql,
  type Change,
  type DesiredState,
  type ManagedScope,
  type PolicyContent,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import { sql } from 'kysely';
import pg from 'pg';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeStatements } from './execute.js';
import { inspect } from './inspect.js';
import { DatabaseError } from './redaction.js';
import {
  PINNED_IF_PRESENT,
  PINNED_SETTINGS,
  pinSessionSettings,
  SESSION_SETTINGS_REFUSED,
} from './session-settings.js';
import { dropRolesWithPrefix, scopeOf } from './test-support/scope.js';

/** One statement as the server logged it (log_statement = all, sent to the client as a LOG notice). */
interface Executed {
  /** `extended`: its own Parse/Bind/Execute (one statement); `simple`: a Query message (any number). */
  readonly protocol: 'extended' | 'simple';
  readonly text: string;
}

// Every pg client of this process, with what the server said it executed. The product opens its own pools,
// so the capture hooks the client class they all share rather than any one connection.
const executedBy = new Map<pg.Client, Executed[]>();
const originalConnect = pg.Client.prototype.connect;
beforeAll(() => {
  pg.Client.prototype.connect = function capture(this: pg.Client, ...args: never[]) {
    const log: Executed[] = [];
    executedBy.set(this, log);
    this.on('notice', (notice) => {
      const match = /^(statement|execute <unnamed>): ([\s\S]*)$/.exec(notice.message ?? '');
      if (match) log.push({ protocol: match[1] === 'statement' ? 'simple' : 'extended', text: match[2]! });
    });
    return (originalConnect as unknown as (...a: never[]) => unknown).apply(this, args);
  } as unknown as typeof pg.Client.prototype.connect;
});
afterAll(() => {
  pg.Client.prototype.connect = originalConnect;
});

/** The statements one transaction ran, as the server logged them, on whichever session ran `first`. */
function transactionRunning(first: string): Executed[] {
  for (const log of executedBy.values()) {
    const at = log.findIndex((entry) => entry.text === first);
    if (at < 0) continue;
    const begin = log.slice(0, at).findLastIndex((entry) => /^begin$/i.test(entry.text));
    const commit = log.findIndex((entry, index) => index > at && /^commit$/i.test(entry.text));
    return log.slice(begin + 1, commit < 0 ? undefined : commit);
  }
  return [];
}

// A quote after a backslash: with standard_conforming_strings off the literal ends after `\'` and the rest
// runs as the executor. `é` is two bytes in UTF-8 that another client_encoding reads as something else.
const comment = (pwned: string): string => `é x\\'; CREATE ROLE "${pwned}" SUPERUSER; --`;

describe.each(postgresTargets().map((target) => ({ target, label: postgresTargetLabel(target) })))(
  'on $label',
  ({ target }) => {
    let sandbox: PostgresSandbox;
    const prefix = `rp_${sandboxId()}_`;
    const owner = `${prefix}owner`;
    // The executor is the sandbox URL's user, the bootstrap superuser: the usual (and worst) case.
    const executor = 'postgres';

    /** A client that no setting of the sandbox database can disturb, as `user`. */
    async function client(user: string, database: string): Promise<pg.Client> {
      const url = new URL(sandbox.adminUrl);
      url.username = user;
      url.pathname = `/${database}`;
      const options =
        '-c default_transaction_read_only=off -c role=none -c local_preload_libraries= -c exit_on_error=off ' +
        '-c idle_session_timeout=0 -c idle_in_transaction_session_timeout=0 -c search_path=pg_catalog ' +
        '-c client_encoding=UTF8';
      const result = new pg.Client({ connectionString: url.toString(), options });
      await result.connect();
      return result;
    }

    async function sqlAs(user: string, database: string, text: string): Promise<pg.QueryResult> {
      const session = await client(user, database);
      try {
        return await session.query(text);
      } finally {
        await session.end();
      }
    }

    /** Back to no hostile setting; the executor's statements logged to the client as LOG notices. */
    async function resetSettings(): Promise<void> {
      const db = `"${sandbox.database}"`;
      await sqlAs(
        executor,
        'postgres',
        `ALTER DATABASE ${db} RESET ALL;
         ALTER ROLE ${executor} IN DATABASE ${db} RESET ALL;
         ALTER ROLE ${executor} IN DATABASE ${db} SET log_statement = 'all';
         ALTER ROLE ${executor} IN DATABASE ${db} SET client_min_messages = 'log';`,
      );
    }

    beforeAll(async () => {
      sandbox = await createPostgresSandbox('hostile_settings', target);
      await sqlAs(
        executor,
        'postgres',
        `CREATE ROLE "${owner}" LOGIN; ALTER DATABASE "${sandbox.database}" OWNER TO "${owner}"`,
      );
      // The owner's look-alikes: each records that it ran (or fails in a read-only transaction, which
      // is as visible), then behaves like the original so nothing else gives it away.
      await sqlAs(
        owner,
        sandbox.database,
        `CREATE SCHEMA tricks;
         CREATE TABLE tricks.ran (what text);
         GRANT INSERT ON tricks.ran TO PUBLIC;
         CREATE FUNCTION tricks.pg_terminate_backend(pid integer, timeout bigint DEFAULT 0) RETURNS boolean
           LANGUAGE sql AS $$ INSERT INTO tricks.ran VALUES ('pg_terminate_backend'); SELECT true $$;
         CREATE FUNCTION tricks.pg_backend_pid() RETURNS integer
           LANGUAGE sql AS $$ INSERT INTO tricks.ran VALUES ('pg_backend_pid'); SELECT 0 $$;
         CREATE FUNCTION tricks.current_database() RETURNS name
           LANGUAGE sql AS $$ INSERT INTO tricks.ran VALUES ('current_database'); SELECT pg_catalog.current_database() $$;
         CREATE FUNCTION tricks.seen(what text) RETURNS boolean
           LANGUAGE sql AS $$ INSERT INTO tricks.ran VALUES (what); SELECT true $$;
         CREATE VIEW tricks.pg_stat_activity AS
           SELECT pid, usename FROM pg_catalog.pg_stat_activity WHERE tricks.seen('pg_stat_activity');
         CREATE SCHEMA tricks_ops;
         CREATE FUNCTION tricks_ops.name_eq_name(name, name) RETURNS boolean
           LANGUAGE sql AS $$ INSERT INTO tricks.ran VALUES ('=(name,name)'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
         CREATE FUNCTION tricks_ops.name_eq_text(name, text) RETURNS boolean
           LANGUAGE sql AS $$ INSERT INTO tricks.ran VALUES ('=(name,text)'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
         CREATE OPERATOR tricks_ops.= (LEFTARG = name, RIGHTARG = name, FUNCTION = tricks_ops.name_eq_name);
         CREATE OPERATOR tricks_ops.= (LEFTARG = name, RIGHTARG = text, FUNCTION = tricks_ops.name_eq_text);`,
      );
      await resetSettings();
    });

    afterAll(async () => {
      if ((sandbox as PostgresSandbox | undefined) === undefined) return;
      await resetSettings().catch(() => undefined);
      await sandbox.drop();
      await dropRolesWithPrefix(sandbox.adminUrl, [], prefix);
    });

    /** Renders `changes`, runs them through the product's connection, and returns what the server ran. */
    /** Runs rendered statements through the product's connection; returns them and what the server ran. */
    async function run(connection: CatalogConnection, changes: readonly Change[], scope: ManagedScope) {
      const before = await inspect(connection.db, scope, null);
      const rendered = renderSql(changes, {
        serverVersionNum: before.server_version_num,
        inventory: before.inventory,
        passwords: {},
      });
      await executeStatements(connection.db, rendered.statements);
      const statements = rendered.statements.map((statement) => statement.sql);
      return { statements, executed: transactionRunning(statements[0]!) };
    }

    /**
     * The victim's policy: a role with the hostile comment, grants on a schema, a wildcard of tables and a
     * function, and default privileges, so that the plan reads every kind of catalog row the engine reads.
     */
    function policyOf(victim: string, text: string): DesiredState {
      const content: PolicyContent = {
        roles: [{ name: victim, comment: text }],
        grants: [
          { role: victim, privileges: ['USAGE'], object: { type: 'schema', name: 'tricks' } },
          { role: victim, privileges: ['SELECT'], object: { type: 'table', schema: 'tricks', name: '*' } },
          {
            role: victim,
            privileges: ['EXECUTE'],
            object: { type: 'function', schema: 'tricks', name: 'seen(text)' },
          },
        ],
        default_privileges: [
          { owner, schema: 'tricks', grant: [{ role: victim, on_type: 'table', privileges: ['SELECT'] }] },
        ],
      };
      const expansion = expandPolicy(content, { policyName: 'hostile-settings' });
      if (!expansion.ok) throw new Error(JSON.stringify(expansion.errors));
      return expansion.desired;
    }

    /** Plans the policy on the connection: the inspection and the plan the executor would compute. */
    async function planOf(connection: CatalogConnection, desired: DesiredState) {
      const snapshot = await inspect(connection.db, deriveManagedScope(desired), null);
      const result = computePlan({
        desired,
        snapshot,
        mode: 'authoritative',
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      });
      return { snapshot, changes: result.changes, blockers: result.blockers };
    }

    // Each is something a database owner may `ALTER DATABASE ... SET` (the test proves it may: the owner
    // runs it); `search_path` names the owner's look-alikes ahead of pg_catalog.
    const CORPUS: readonly (readonly [label: string, setting: (owner: string) => string])[] = [
      ['standard_conforming_strings off', () => 'standard_conforming_strings = off'],
      [
        'look-alike functions and pg_stat_activity first on the search_path',
        () => 'search_path = tricks, pg_catalog',
      ],
      ['look-alike = operators first on the search_path', () => 'search_path = tricks_ops, pg_catalog'],
      ['a login role of the owner', (name) => `role = '${name}'`],
      ['a client encoding other than UTF8', () => "client_encoding = 'SJIS'"],
      ['read-only transactions', () => 'default_transaction_read_only = on'],
      ['serializable transactions', () => "default_transaction_isolation = 'serializable'"],
      ['a session that ends on its first error', () => 'exit_on_error = on'],
      ['idle sessions ended after 1 ms', () => 'idle_session_timeout = 1'],
      ['idle transactions ended after 1 ms', () => 'idle_in_transaction_session_timeout = 1'],
      ['NULL array elements read as text', () => 'array_nulls = off'],
      ['every identifier quoted in deparsed output', () => 'quote_all_identifiers = on'],
      ['x = NULL turned into x IS NULL', () => 'transform_null_equals = on'],
      ['a plugin library loaded at login', () => "local_preload_libraries = 'rolepolicy_no_such_plugin'"],
    ];

    async function attack(level: 'database' | 'role', settings: readonly string[], victim: string) {
      await resetSettings();
      await sqlAs(executor, sandbox.database, 'TRUNCATE tricks.ran');
      const db = `"${sandbox.database}"`;
      for (const setting of settings) {
        // The database owner sets the database's settings itself; a role setting needs rights on the executor.
        if (level === 'database') await sqlAs(owner, sandbox.database, `ALTER DATABASE ${db} SET ${setting}`);
        else await sqlAs(executor, 'postgres', `ALTER ROLE ${executor} IN DATABASE ${db} SET ${setting}`);
      }
      const connection = openConnection({ url: sandbox.url, maxConnections: 1 });
      try {
        const text = comment(`${victim}_pwned`);
        const desired = policyOf(victim, text);
        const planned = await planOf(connection, desired);
        expect(planned.blockers).toEqual([]);
        const created = await run(connection, planned.changes, deriveManagedScope(desired));
        // The inspector's view afterwards: converged, and the comment as reviewed.
        const after = await planOf(connection, desired);
        // Read with a client of its own: the product's session could read its own mistranslation back intact.
        const stored = await sqlAs(
          executor,
          sandbox.database,
          `SELECT pg_catalog.shobj_description(oid, 'pg_authid') AS comment FROM pg_catalog.pg_roles WHERE rolname = '${victim}'`,
        );
        const retire: readonly Change[] = [
          { kind: 'terminate_sessions', role: victim },
          { kind: 'drop_owned', role: victim },
          { kind: 'drop_role', name: victim },
        ];
        const dropped = await run(connection, retire, scopeOf({ roles: [victim] }));
        const gone = await inspect(connection.db, scopeOf({ roles: [victim] }), null);
        return { text, created, after, dropped, gone, stored: stored.rows as unknown };
      } finally {
        await connection.close();
        await resetSettings();
      }
    }

    async function expectUnchanged(result: Awaited<ReturnType<typeof attack>>, victim: string) {
      const { text, created, after, dropped, gone, stored } = result;
      expect(stored).toEqual([{ comment: text }]);
      expect(after.snapshot.roles.map((role) => [role.name, role.state.comment])).toEqual([[victim, text]]);
      expect(after.changes).toEqual([]);
      expect(gone.existing_roles).toEqual([]);
      const pwnedRows = await sqlAs(
        executor,
        'postgres',
        `SELECT 1 FROM pg_roles WHERE rolname = '${victim}_pwned'`,
      );
      expect(pwnedRows.rowCount).toBe(0);
      const ran = await sqlAs(executor, sandbox.database, 'SELECT what FROM tricks.ran');
      expect(ran.rows).toEqual([]);
      // Byte for byte what was reviewed, each statement in its own protocol message.
      expect(created.executed).toEqual(
        created.statements.map((sql) => ({ protocol: 'extended', text: sql })),
      );
      expect(dropped.executed).toEqual(
        dropped.statements.map((sql) => ({ protocol: 'extended', text: sql })),
      );
    }

    /** Every hostile setting at once; on 16+ also one that makes CREATE ROLE grant the new role to its creator. */
    const everything = (): string[] => [
      ...CORPUS.map(([, setting]) => setting(owner)),
      ...(sandbox.serverVersionNum >= 160000 ? ["createrole_self_grant = 'set, inherit'"] : []),
    ];

    describe('the pinned settings', () => {
      it('read back as pinned on a session of a database that sets all of them otherwise', async () => {
        await resetSettings();
        const db = `"${sandbox.database}"`;
        for (const setting of everything()) {
          await sqlAs(owner, sandbox.database, `ALTER DATABASE ${db} SET ${setting}`);
        }
        // A URL's own options come first and lose to ours; structured params get the same options.
        const url = new URL(sandbox.url);
        url.searchParams.set('options', '-c standard_conforming_strings=off -c search_path=tricks');
        const params = {
          host: url.hostname,
          port: Number(url.port || 5432),
          dbname: sandbox.database,
          username: decodeURIComponent(url.username),
          sslMode: 'disable',
        };
        const settings = [...PINNED_SETTINGS, ...PINNED_IF_PRESENT];
        const names = settings.map((setting) => setting.name);
        const expected = settings
          .filter(({ name }) => sandbox.serverVersionNum >= 160000 || name !== 'createrole_self_grant')
          .map(({ name, value }) => ({ name, value }));
        try {
          for (const spec of [{ url: url.toString() }, { params }]) {
            const connection = openConnection({ ...spec, maxConnections: 1 });
            try {
              const { rows } = await sql<{ name: string; value: string | null }>`
                SELECT s.name, pg_catalog.current_setting(s.name, true) AS value
                FROM pg_catalog.unnest(${names}::pg_catalog.text[]) AS s(name)`.execute(connection.db);
              expect(rows.filter((row) => row.value !== null)).toEqual(expected);
            } finally {
              await connection.close();
            }
          }
        } finally {
          await resetSettings();
        }
      });

      it('a session that did not take the startup options (a pooler dropping them) is refused, naming the setting', async () => {
        await resetSettings();
        await sqlAs(
          owner,
          sandbox.database,
          `ALTER DATABASE "${sandbox.database}" SET standard_conforming_strings = off`,
        );
        const session = new pg.Client({ connectionString: sandbox.url });
        await session.connect();
        try {
          const refused = await pinSessionSettings({
            run: async (text, parameters) => (await session.query(text, [...parameters])).rows,
          }).catch((error: unknown) => error);
          expect(refused).toBeInstanceOf(DatabaseError);
          expect((refused as DatabaseError).code).toBe(SESSION_SETTINGS_REFUSED);
          expect((refused as DatabaseError).message).toContain(
            'standard_conforming_strings is "off", not "on"',
          );
        } finally {
          await session.end();
          await resetSettings();
        }
      });
    });

    describe('a database owner setting the executor session', () => {
      it.each(CORPUS.map(([label, setting], index) => ({ label, setting, index })))(
        'database setting "$label" changes no statement the executor runs',
        async ({ setting, index }) => {
          const victim = `${prefix}v${index}`;
          await expectUnchanged(await attack('database', [setting(owner)], victim), victim);
        },
        60_000,
      );

      it('all of them at once, as database settings and as the executor role settings in this database', async () => {
        const all = everything();
        const victim = `${prefix}all_db`;
        await expectUnchanged(await attack('database', all, victim), victim);
        const roleVictim = `${prefix}all_role`;
        await expectUnchanged(await attack('role', all, roleVictim), roleVictim);
      }, 60_000);
    });
  },
);

// createrole_self_grant exists from 16 and only acts for a non-superuser executor: run on an embedded 16
// whatever PG_MAJORS selects, with an executor that has CREATEROLE and nothing else.
describe('on PostgreSQL 16, a database owner setting createrole_self_grant for a CREATEROLE executor', () => {
  let sandbox: PostgresSandbox;
  const prefix = `rp_${sandboxId()}_`;
  const executor = `${prefix}exec`;
  const owner = `${prefix}owner`;
  const victim = `${prefix}victim`;
  const urlAs = (user: string): string => {
    const url = new URL(sandbox.url);
    url.username = user;
    return url.toString();
  };
  async function rows(url: string, text: string, values: unknown[] = []): Promise<unknown[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    sandbox = await createPostgresSandbox('hostile_self_grant', 16);
    await rows(
      sandbox.adminUrl,
      `CREATE ROLE "${executor}" LOGIN CREATEROLE; CREATE ROLE "${owner}" LOGIN;
       ALTER DATABASE "${sandbox.database}" OWNER TO "${owner}"`,
    );
    await rows(
      urlAs(owner),
      `ALTER DATABASE "${sandbox.database}" SET createrole_self_grant = 'set, inherit'`,
    );
  }, 60_000);

  afterAll(async () => {
    if ((sandbox as PostgresSandbox | undefined) === undefined) return;
    await sandbox.drop();
    await dropRolesWithPrefix(sandbox.adminUrl, [], prefix);
  });

  it('CREATE ROLE leaves the executor only the ADMIN option PostgreSQL always gives it', async () => {
    const connection = openConnection({ url: urlAs(executor), maxConnections: 1 });
    try {
      const scope = scopeOf({ roles: [victim] });
      const before = await inspect(connection.db, scope, null);
      const change: Change = {
        kind: 'create_role',
        name: victim,
        state: {
          login: false,
          superuser: false,
          createdb: false,
          createrole: false,
          inherit: true,
          replication: false,
          bypassrls: false,
          connection_limit: -1,
          comment: null,
          password_valid_until: null,
        },
      };
      const rendered = renderSql([change], {
        serverVersionNum: before.server_version_num,
        inventory: before.inventory,
        passwords: {},
      });
      await executeStatements(connection.db, rendered.statements);
    } finally {
      await connection.close();
    }
    const edges = await rows(
      sandbox.adminUrl,
      `SELECT m.admin_option, m.inherit_option, m.set_option FROM pg_auth_members m
        WHERE m.roleid = $1::regrole AND m.member = $2::regrole`,
      [`"${victim}"`, `"${executor}"`],
    );
    expect(edges).toEqual([{ admin_option: true, inherit_option: false, set_option: false }]);
  });
});
