// Every change kind executed on the real server through the renderer, then read back by inspection:
// the snapshot shows exactly the effect the change promises (state created with raw SQL beforehand).

import {
  renderSql,
  scramSha256Verifier,
  type CatalogSnapshot,
  type Change,
  type ManagedScope,
} from '@rolepolicy/policy';
import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeStatements } from './execute.js';
import { inspect } from './inspect.js';
import { dropRolesWithPrefix, runSql, scopeOf } from './test-support/scope.js';

let sandbox: PostgresSandbox;
let connection: CatalogConnection;
const prefix = `rp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;

beforeAll(async () => {
  sandbox = await createPostgresSandbox('changes');
  connection = openConnection({ url: sandbox.url });
});

afterAll(async () => {
  await connection.close();
  await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
  await sandbox.drop();
});

async function run(
  changes: readonly Change[],
  scope: ManagedScope,
  passwords: Record<string, string> = {},
): Promise<CatalogSnapshot> {
  const before = await inspect(connection.db, scope, null);
  const rendered = renderSql(changes, {
    serverVersionNum: before.server_version_num,
    inventory: before.inventory,
    passwords,
  });
  await executeStatements(connection.db, rendered.statements);
  return inspect(connection.db, scope, null);
}

const STATE = {
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
};

describe('each change kind has the effect inspection reads back', () => {
  it('create_role, alter_role (attributes, config set/reset, valid_until) and set_comment', async () => {
    const scope = scopeOf({ roles: [r('cr')] });
    const created = await run(
      [{ kind: 'create_role', name: r('cr'), state: { ...STATE, login: true, comment: 'made' } }],
      scope,
    );
    expect(created.roles[0]).toEqual({
      name: r('cr'),
      state: { ...STATE, login: true, comment: 'made', config: {} },
    });
    const altered = await run(
      [
        {
          kind: 'alter_role',
          name: r('cr'),
          attributes: [
            { kind: 'login', value: false },
            { kind: 'createdb', value: true },
            { kind: 'connection_limit', value: 3 },
            { kind: 'valid_until', value: '2030-05-01T10:00:00Z' },
            { kind: 'set_config', parameter: 'search_path', value: 'a, "My Schema"' },
            { kind: 'set_config', parameter: 'statement_timeout', value: '30s' },
          ],
        },
        { kind: 'set_comment', name: r('cr'), comment: "it's new" },
      ],
      scope,
    );
    expect(altered.roles[0]!.state).toEqual({
      ...STATE,
      createdb: true,
      connection_limit: 3,
      comment: "it's new",
      password_valid_until: '2030-05-01T10:00:00Z',
      config: { search_path: 'a, "My Schema"', statement_timeout: '30s' },
    });
    const reset = await run(
      [
        {
          kind: 'alter_role',
          name: r('cr'),
          attributes: [
            { kind: 'reset_config', parameter: 'statement_timeout' },
            { kind: 'valid_until', value: null },
          ],
        },
        { kind: 'set_comment', name: r('cr'), comment: null },
      ],
      scope,
    );
    expect(reset.roles[0]!.state).toMatchObject({
      comment: null,
      password_valid_until: null,
      config: { search_path: 'a, "My Schema"' },
    });
  });

  it('create_schema, alter_schema_owner and ensure_schema_owner_privileges', async () => {
    await runSql(sandbox.url, `CREATE ROLE "${r('so1')}"; CREATE ROLE "${r('so2')}";`);
    const scope = scopeOf({ roles: [r('so1'), r('so2')], schemas: [r('sch')] });
    const created = await run([{ kind: 'create_schema', name: r('sch'), owner: r('so1') }], scope);
    expect(created.schemas).toEqual([
      { name: r('sch'), owner: r('so1'), owner_privileges: ['CREATE', 'USAGE'] },
    ]);
    await runSql(
      sandbox.url,
      `ALTER SCHEMA "${r('sch')}" OWNER TO "${r('so2')}"; REVOKE ALL ON SCHEMA "${r('sch')}" FROM "${r('so2')}";`,
    );
    const moved = await run(
      [
        { kind: 'alter_schema_owner', name: r('sch'), owner: r('so1') },
        {
          kind: 'ensure_schema_owner_privileges',
          name: r('sch'),
          owner: r('so1'),
          privileges: ['CREATE', 'USAGE'],
        },
      ],
      scope,
    );
    expect(moved.schemas).toEqual([
      { name: r('sch'), owner: r('so1'), owner_privileges: ['CREATE', 'USAGE'] },
    ]);
  });

  it('grant and revoke, per object and over a wildcard expanded per relkind', async () => {
    await runSql(
      sandbox.url,
      `CREATE ROLE "${r('g')}"; CREATE SCHEMA gs; CREATE TABLE gs.t (id int); CREATE VIEW gs.v AS SELECT 1 AS x;
       CREATE TABLE gs.u (id int);`,
    );
    const scope = scopeOf({
      roles: [r('g')],
      schemas: ['gs'],
      wildcards: [{ grantee: r('g'), object_type: 'table', schema: 'gs', privileges: ['SELECT'] }],
    });
    const granted = await run(
      [
        {
          kind: 'grant',
          role: r('g'),
          privileges: ['SELECT'],
          object_type: 'table',
          schema: 'gs',
          name: '*',
        },
        { kind: 'grant', role: r('g'), privileges: ['INSERT'], object_type: 'view', schema: 'gs', name: 'v' },
      ],
      scope,
    );
    // The table wildcard touches tables only, never the view.
    expect(granted.grants.map((g) => [g.object_type, g.name, g.privileges])).toEqual([
      ['table', 't', ['SELECT']],
      ['table', 'u', ['SELECT']],
      ['view', 'v', ['INSERT']],
    ]);
    const revoked = await run(
      [
        {
          kind: 'revoke',
          role: r('g'),
          privileges: ['SELECT'],
          object_type: 'table',
          schema: 'gs',
          name: 'u',
          grantor: null,
        },
        {
          kind: 'revoke',
          role: r('g'),
          privileges: ['INSERT'],
          object_type: 'view',
          schema: 'gs',
          name: 'v',
          grantor: null,
        },
      ],
      scope,
    );
    expect(revoked.grants.map((g) => [g.object_type, g.name, g.privileges])).toEqual([
      ['table', 't', ['SELECT']],
    ]);
  });

  it('set_default_privilege and revoke_default_privilege, schema and global scope', async () => {
    await runSql(sandbox.url, `CREATE ROLE "${r('do')}"; CREATE ROLE "${r('dg')}"; CREATE SCHEMA ds;`);
    const scope = scopeOf({
      roles: [r('do'), r('dg')],
      schemas: ['ds'],
      default_privilege_scopes: [
        { owner: r('do'), scope: { type: 'global' }, on_type: 'function', public_privileges: ['EXECUTE'] },
      ],
    });
    const set = await run(
      [
        {
          kind: 'set_default_privilege',
          owner: r('do'),
          scope: { type: 'schema', schema: 'ds' },
          on_type: 'table',
          grantee: r('dg'),
          privileges: ['SELECT'],
        },
        {
          kind: 'set_default_privilege',
          owner: r('do'),
          scope: { type: 'global' },
          on_type: 'function',
          grantee: r('dg'),
          privileges: ['EXECUTE'],
        },
        {
          kind: 'revoke_default_privilege',
          owner: r('do'),
          scope: { type: 'global' },
          on_type: 'function',
          grantee: 'PUBLIC',
          privileges: ['EXECUTE'],
        },
      ],
      scope,
    );
    expect(set.default_privileges).toEqual([
      {
        owner: r('do'),
        scope: { type: 'global' },
        on_type: 'function',
        grantee: r('dg'),
        privileges: ['EXECUTE'],
      },
      {
        owner: r('do'),
        scope: { type: 'schema', schema: 'ds' },
        on_type: 'table',
        grantee: r('dg'),
        privileges: ['SELECT'],
      },
    ]);
    const revoked = await run(
      [
        {
          kind: 'revoke_default_privilege',
          owner: r('do'),
          scope: { type: 'schema', schema: 'ds' },
          on_type: 'table',
          grantee: r('dg'),
          privileges: ['SELECT'],
        },
      ],
      scope,
    );
    expect(revoked.default_privileges).toHaveLength(1);
  });

  it('add_member and remove_member', async () => {
    await runSql(sandbox.url, `CREATE ROLE "${r('grp')}"; CREATE ROLE "${r('mem')}";`);
    const scope = scopeOf({ roles: [r('grp'), r('mem')] });
    const added = await run(
      [{ kind: 'add_member', role: r('grp'), member: r('mem'), inherit: true, admin: true }],
      scope,
    );
    expect(added.memberships).toEqual([
      { role: r('grp'), member: r('mem'), inherit: true, admin: true, grantor: null },
    ]);
    const removed = await run(
      [{ kind: 'remove_member', role: r('grp'), member: r('mem'), grantor: null }],
      scope,
    );
    expect(removed.memberships).toEqual([]);
  });

  it('terminate_sessions, reassign_owned, drop_owned and drop_role retire a role that owns objects', async () => {
    await runSql(
      sandbox.url,
      `CREATE ROLE "${r('old')}" LOGIN; CREATE ROLE "${r('heir')}"; CREATE SCHEMA rs;
       GRANT CREATE, USAGE ON SCHEMA rs TO "${r('old')}"; SET ROLE "${r('old')}"; CREATE TABLE rs.owned (id int); RESET ROLE;`,
    );
    const session = new pg.Client({ connectionString: sandbox.url.replace('postgres@', `${r('old')}@`) });
    await session.connect();
    session.on('error', () => undefined);
    const scope = scopeOf({ roles: [r('old'), r('heir')], schemas: ['rs'] });
    const after = await run(
      [
        { kind: 'terminate_sessions', role: r('old') },
        { kind: 'reassign_owned', from_role: r('old'), to_role: r('heir') },
        { kind: 'drop_owned', role: r('old') },
        { kind: 'drop_role', name: r('old') },
      ],
      scope,
    );
    expect(after.existing_roles).toEqual([r('heir')]);
    const owner = await new Promise<string>((resolve, reject) => {
      const client = new pg.Client({ connectionString: sandbox.url });
      client
        .connect()
        .then(() =>
          client.query<{ owner: string }>(
            "SELECT tableowner AS owner FROM pg_tables WHERE schemaname = 'rs'",
          ),
        )
        .then((result) => resolve(result.rows[0]!.owner))
        .catch(reject)
        .finally(() => void client.end());
    });
    expect(owner).toBe(r('heir'));
    await expect(session.query('SELECT 1')).rejects.toThrow();
    await session.end().catch(() => undefined);
  });

  it('set_password: the server stores exactly the SCRAM verifier that was sent, never cleartext', async () => {
    const password = 'correct horse battery staple';
    await runSql(sandbox.url, `CREATE ROLE "${r('pw')}" LOGIN;`);
    const verifier = scramSha256Verifier(password, randomBytes(16));
    await run(
      [{ kind: 'set_password', name: r('pw'), password_source: 's:k:1' }],
      scopeOf({ roles: [r('pw')] }),
      { [r('pw')]: verifier },
    );
    const client = new pg.Client({ connectionString: sandbox.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ ok: boolean }>(
        'SELECT rolpassword = $2 AS ok FROM pg_authid WHERE rolname = $1',
        [r('pw'), verifier],
      );
      expect(rows[0]!.ok).toBe(true);
    } finally {
      await client.end();
    }
  });
});
