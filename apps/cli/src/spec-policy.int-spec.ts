// A policy written from the spec's field tables, applied through the CLI and checked in the live catalog:
// profiles x schemas with role_pattern, global and schema default privileges, memberships with admin,
// a retirement with reassign and drop_owned, PUBLIC absences, a database grant and a secretRef password.

import { parseScramVerifier, scramSha256Verifier } from '@rolepolicy/policy';
import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';

import { runCli } from './test-support/run-cli.js';

let sandbox: PostgresSandbox;
const prefix = `sp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
const PASSWORD = 'spec-Pa55word';
/** Each CLI run is a fresh Node process; on a loaded CI machine a start can take seconds. */
const SLOW = 120_000;

async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: sandbox.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  sandbox = await createPostgresSandbox('cli_spec_policy');
  await query(`
    CREATE ROLE "${r('owner')}"; CREATE ROLE "${r('legacy')}" LOGIN;
    CREATE SCHEMA sales AUTHORIZATION "${r('owner')}"; CREATE SCHEMA hr AUTHORIZATION "${r('owner')}";
    SET ROLE "${r('owner')}";
    CREATE TABLE sales.orders (id int); CREATE SEQUENCE sales.order_ids;
    CREATE FUNCTION sales.total(a integer) RETURNS int LANGUAGE sql AS 'SELECT a';
    CREATE TABLE hr.people (id int);
    RESET ROLE;
    CREATE TABLE public.legacy_t (id int); ALTER TABLE public.legacy_t OWNER TO "${r('legacy')}";`);
});

afterAll(async () => {
  const rows = await query<{ rolname: string }>(
    'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
    [prefix],
  );
  for (const row of rows) await query(`DROP OWNED BY "${row.rolname}" CASCADE`);
  await sandbox.drop();
  const admin = new pg.Client({ connectionString: sandbox.adminUrl });
  await admin.connect();
  for (const row of rows) await admin.query(`DROP ROLE IF EXISTS "${row.rolname}"`);
  await admin.end();
});

const manifest = (): string => `
apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicy
metadata: { name: shop }
spec:
  connection: { secretRef: { name: db } }
  approval: auto
  default_owner: ${r('owner')}
  role_pattern: "${prefix}{schema}_{profile}"
  profiles:
    reader:
      grants:
        - { object: { type: schema }, privileges: [USAGE] }
        - { object: { type: table, name: "*" }, privileges: [SELECT] }
        - { object: { type: sequence, name: "*" }, privileges: [USAGE] }
      default_privileges:
        - { on_type: table, privileges: [SELECT] }
    writer:
      config: { search_path: "{schema}, public" }
      grants:
        - { object: { type: schema }, privileges: [USAGE, CREATE] }
        - { object: { type: table, name: "*" }, privileges: [SELECT, INSERT, UPDATE, DELETE] }
  schemas:
    - { name: sales, profiles: [reader, writer] }
    - { name: hr, profiles: [reader], role_pattern: "${prefix}people_{profile}" }
  roles:
    - { name: ${r('owner')}, external: true }
    - name: ${r('app')}
      login: true
      connection_limit: 5
      comment: "the app's role"
      config: { statement_timeout: "30s" }
      password: { secretRef: { name: app-db }, secretKey: password }
      password_valid_until: "2030-01-01T00:00:00Z"
    - { name: ${r('auditor')}, inherit: false }
  grants:
    - role: ${r('app')}
      object: { type: function, schema: sales, name: "total(integer)" }
      privileges: [EXECUTE]
    - role: PUBLIC
      ensure: absent
      object: { type: function, schema: sales, name: "total(integer)" }
      privileges: [EXECUTE]
    - role: ${r('auditor')}
      object: { type: database, name: ${sandbox.database} }
      privileges: [CONNECT]
  default_privileges:
    - scope: { type: global }
      grant:
        - { role: ${r('auditor')}, on_type: function, privileges: [EXECUTE] }
        - { role: PUBLIC, ensure: absent, on_type: function, privileges: [EXECUTE] }
    - schema: hr
      grant:
        - { role: ${r('auditor')}, on_type: sequence, privileges: [USAGE] }
  memberships:
    - role: ${r('sales_reader')}
      members: [{ name: ${r('app')} }, { name: ${r('auditor')}, admin: true }]
    - role: ${r('sales_writer')}
      members: [{ name: ${r('app')} }]
  retirements:
    - { role: ${r('legacy')}, reassign_owned_to: ${r('owner')}, drop_owned: true, terminate_sessions: true }
`;

const cli = (command: string, ...extra: string[]) =>
  runCli([command, '-f', '-', '--database-url', sandbox.url, ...extra], {
    stdin: manifest(),
    env: { ROLEPOLICY_PASSWORD_APP_DB_PASSWORD: PASSWORD },
  });

describe('a policy from the spec applied through the CLI', () => {
  it(
    'validates, plans (exit 2), applies, reads back in the catalog, and then plans nothing (exit 0)',
    async () => {
      expect((await runCli(['validate', '-f', '-'], { stdin: manifest() })).code).toBe(0);
      expect((await cli('plan')).code).toBe(2);
      const applied = await cli('apply', '--yes');
      expect(applied.stderr).not.toContain('warning');
      expect(applied.code).toBe(0);
      expect(`${applied.stdout}${applied.stderr}`).not.toContain(PASSWORD);

      const has = async (fn: string, role: string, object: string, privilege: string) =>
        (await query<{ ok: boolean }>(`SELECT ${fn}($1, $2, $3) AS ok`, [role, object, privilege]))[0]!.ok;
      // Profiles x schemas, with the policy-level and the schema-level role_pattern.
      expect(await has('has_table_privilege', r('sales_reader'), 'sales.orders', 'SELECT')).toBe(true);
      expect(await has('has_table_privilege', r('sales_reader'), 'sales.orders', 'INSERT')).toBe(false);
      expect(await has('has_sequence_privilege', r('sales_reader'), 'sales.order_ids', 'USAGE')).toBe(true);
      expect(await has('has_table_privilege', r('sales_writer'), 'sales.orders', 'DELETE')).toBe(true);
      expect(await has('has_schema_privilege', r('sales_writer'), 'sales', 'CREATE')).toBe(true);
      expect(await has('has_table_privilege', r('people_reader'), 'hr.people', 'SELECT')).toBe(true);
      // PUBLIC absence and the one-off function grant.
      expect(await has('has_function_privilege', r('app'), 'sales.total(integer)', 'EXECUTE')).toBe(true);
      const [proc] = await query<{ acl: string }>(
        "SELECT proacl::text AS acl FROM pg_proc WHERE oid = 'sales.total(integer)'::regprocedure",
      );
      expect(proc!.acl).not.toMatch(/[{,]=X\//);
      expect(await has('has_database_privilege', r('auditor'), sandbox.database, 'CONNECT')).toBe(true);

      // Default privileges: global (with the PUBLIC revoke) and per schema, owned by default_owner.
      const defaults = await query<{ schema: string; type: string; acl: string }>(
        `SELECT coalesce(defaclnamespace::regnamespace::text, '-') AS schema, defaclobjtype AS type,
                defaclacl::text AS acl
           FROM pg_default_acl WHERE defaclrole = $1::regrole ORDER BY 1, 2`,
        [r('owner')],
      );
      expect(defaults).toEqual([
        { schema: '-', type: 'f', acl: `{${r('owner')}=X/${r('owner')},${r('auditor')}=X/${r('owner')}}` },
        { schema: 'hr', type: 'S', acl: `{${r('auditor')}=U/${r('owner')}}` },
        { schema: 'hr', type: 'r', acl: `{${r('people_reader')}=r/${r('owner')}}` },
        { schema: 'sales', type: 'r', acl: `{${r('sales_reader')}=r/${r('owner')}}` },
      ]);

      // Role attributes, config (with {schema} substituted), comment and the secretRef password.
      const [app] = await query<{
        login: boolean;
        limit: number;
        until: string;
        config: string[];
        comment: string;
        verifier: string;
      }>(
        `SELECT a.rolcanlogin AS login, a.rolconnlimit AS limit,
                to_char(a.rolvaliduntil AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS until,
                s.setconfig AS config, shobj_description(a.oid, 'pg_authid') AS comment, a.rolpassword AS verifier
           FROM pg_authid a LEFT JOIN pg_db_role_setting s ON s.setrole = a.oid AND s.setdatabase = 0
          WHERE a.rolname = $1`,
        [r('app')],
      );
      expect(app).toMatchObject({
        login: true,
        limit: 5,
        until: '2030-01-01 00:00',
        config: ['statement_timeout=30s'],
        comment: "the app's role",
      });
      const parsed = parseScramVerifier(app!.verifier);
      expect(parsed).not.toBeNull();
      expect(scramSha256Verifier(PASSWORD, parsed!.salt, parsed!.iterations)).toBe(app!.verifier);
      const [writer] = await query<{ config: string[] }>(
        'SELECT rolconfig AS config FROM pg_roles WHERE rolname = $1',
        [r('sales_writer')],
      );
      expect(writer!.config).toEqual(['search_path=sales, public']);
      const [auditor] = await query<{ inherit: boolean }>(
        'SELECT rolinherit AS inherit FROM pg_roles WHERE rolname = $1',
        [r('auditor')],
      );
      expect(auditor!.inherit).toBe(false);

      // Memberships with their admin option.
      const edges = await query<{ role: string; member: string; admin: boolean }>(
        `SELECT g.rolname AS role, m.rolname AS member, a.admin_option AS admin
           FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles m ON m.oid = a.member
          WHERE starts_with(m.rolname, $1) ORDER BY 1, 2`,
        [prefix],
      );
      expect(edges).toEqual([
        { role: r('sales_reader'), member: r('app'), admin: false },
        { role: r('sales_reader'), member: r('auditor'), admin: true },
        { role: r('sales_writer'), member: r('app'), admin: false },
      ]);

      // The retirement: objects reassigned to the successor, the role dropped.
      expect(await query('SELECT 1 FROM pg_roles WHERE rolname = $1', [r('legacy')])).toHaveLength(0);
      const [legacy] = await query<{ owner: string }>(
        "SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 'public.legacy_t'::regclass",
      );
      expect(legacy!.owner).toBe(r('owner'));

      const again = await cli('plan');
      expect(again.stdout).toContain('No changes');
      expect(again.code).toBe(0);
    },
    SLOW,
  );
});
