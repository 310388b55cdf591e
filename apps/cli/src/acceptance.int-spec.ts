// Acceptance scenarios found by QA: policies applied through the CLI, then the live catalog and a
// second plan checked. Each scenario here once failed (crash or a plan that never converged).

import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';

import { withClusterLock } from './test-support/cluster-lock.js';
import { runCli } from './test-support/run-cli.js';

let sandbox: PostgresSandbox;
const prefix = `qa_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
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
  sandbox = await createPostgresSandbox('cli_acceptance');
  await query(`
    CREATE SCHEMA app;
    CREATE TABLE app.t1 (id int);
    CREATE FUNCTION app.f(a integer, b text) RETURNS int LANGUAGE sql AS 'SELECT 1';`);
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

const policy = `
roles:
  - name: ${r('svc')}
    login: true
    inherit: false
  - name: ${r('ro')}
grants:
  - role: ${r('svc')}
    object: { type: function, schema: app, name: "f(a integer, b text)" }
    privileges: [EXECUTE]
  - role: PUBLIC
    ensure: absent
    object: { type: function, schema: app, name: "f(a integer, b text)" }
    privileges: [EXECUTE]
  - role: ${r('ro')}
    object: { type: table, schema: app, name: "*" }
    privileges: [SELECT]
memberships:
  - role: ${r('ro')}
    members: [{ name: ${r('svc')}, inherit: false, admin: true }]
`;

const cli = (command: string, ...extra: string[]) =>
  runCli([command, '-f', '-', '--database-url', sandbox.url, ...extra], { stdin: policy });

describe('acceptance: apply, then the second plan exits 0', () => {
  it(
    'a function named with argument names is granted, PUBLIC EXECUTE revoked, and an inherit: false edge of a NOINHERIT member converges',
    async () => {
      const applied = await cli('apply', '--yes');
      expect(applied.stderr).not.toContain('syntax error');
      expect(applied.code).toBe(0);
      const acl = await query<{ acl: string }>(
        "SELECT proacl::text AS acl FROM pg_proc WHERE proname = 'f' AND pronamespace = 'app'::regnamespace",
      );
      expect(acl[0]?.acl).toContain(`${r('svc')}=X/`);
      expect(acl[0]?.acl).not.toMatch(/[{,]=X\//);
      const again = await cli('plan');
      expect(again.stdout).toContain('No changes');
      expect(again.code).toBe(0);
    },
    SLOW,
  );

  it(
    'drift: additive keeps an injected grant, authoritative revokes it',
    async () => {
      await query(`GRANT INSERT ON app.t1 TO "${r('ro')}"`);
      const additive = await cli('plan', '--mode', 'additive');
      expect(additive.code).toBe(0);
      const authoritative = await cli('apply', '--yes', '--format', 'sql');
      expect(authoritative.stdout).toContain(`REVOKE INSERT ON TABLE "app"."t1" FROM "${r('ro')}"`);
      expect(authoritative.code).toBe(0);
      const privileges = await query<{ insert: boolean }>(
        "SELECT has_table_privilege($1, 'app.t1', 'INSERT') AS insert",
        [r('ro')],
      );
      expect(privileges[0]?.insert).toBe(false);
      expect((await cli('plan')).code).toBe(0);
    },
    SLOW,
  );
});

describe('acceptance: adopt mode and schema owner transfers', () => {
  const adopt = (allow: boolean) => `
reconciliation_mode: adopt
allow_schema_owner_transfers: ${allow}
roles: [{ name: ${r('owner')} }]
schemas: [{ name: app, owner: ${r('owner')} }]
`;
  const owner = async () =>
    (
      await query<{ owner: string }>(
        "SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = 'app'",
      )
    )[0]?.owner;

  it(
    'with allow_schema_owner_transfers false the apply fails with OwnerTransferBlocked and nothing is applied',
    async () => {
      const before = await owner();
      const run = await runCli(['apply', '-f', '-', '--database-url', sandbox.url, '--yes'], {
        stdin: adopt(false),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('OwnerTransferBlocked');
      expect(await owner()).toBe(before);
      const roles = await query('SELECT 1 FROM pg_roles WHERE rolname = $1', [r('owner')]);
      expect(roles).toHaveLength(0);
    },
    SLOW,
  );

  it(
    'with allow_schema_owner_transfers true the transfer is applied',
    async () => {
      const run = await runCli(['apply', '-f', '-', '--database-url', sandbox.url, '--yes'], {
        stdin: adopt(true),
      });
      expect(run.code).toBe(0);
      expect(await owner()).toBe(r('owner'));
    },
    SLOW,
  );
});

describe('acceptance: grants to an object owner', () => {
  it(
    "a per-object grant to the object's owner converges (owners hold privileges implicitly)",
    async () => {
      await query(`CREATE ROLE "${r('tbl_owner')}"; CREATE TABLE app.owned (id int);
        ALTER TABLE app.owned OWNER TO "${r('tbl_owner')}"`);
      const stdin = `roles: [{ name: ${r('tbl_owner')} }]
grants:
  - { role: ${r('tbl_owner')}, object: { type: table, schema: app, name: owned }, privileges: [INSERT] }
`;
      const args = ['-f', '-', '--database-url', sandbox.url];
      expect((await runCli(['apply', ...args, '--yes'], { stdin })).code).toBe(0);
      const again = await runCli(['plan', ...args], { stdin });
      expect(again.stdout).toContain('No changes');
      expect(again.code).toBe(0);
    },
    SLOW,
  );
});

describe('acceptance: exclusive memberships of predefined roles', () => {
  it(
    'exclusive: true with members: [] revokes every live member of the pg_* role',
    // pg_monitor's members are cluster-wide: a concurrent run of this test (CI beside a session) would
    // drop its member between our plan and our apply, or grant one before our second plan.
    () =>
      withClusterLock('pg_monitor members', async () => {
        await query(`CREATE ROLE "${r('monitor')}"; GRANT pg_monitor TO "${r('monitor')}"`);
        const stdin = `memberships: [{ role: pg_monitor, exclusive: true, members: [] }]\n`;
        const args = ['-f', '-', '--database-url', sandbox.url];
        const applied = await runCli(['apply', ...args, '--yes'], { stdin });
        expect(applied.code).toBe(0);
        const members = await query(
          "SELECT 1 FROM pg_auth_members WHERE roleid = 'pg_monitor'::regrole AND member = $1::regrole",
          [r('monitor')],
        );
        expect(members).toHaveLength(0);
        expect((await runCli(['plan', ...args], { stdin })).code).toBe(0);
      }),
    SLOW,
  );
});

describe('acceptance: exit codes of plan and apply on unusable input', () => {
  it(
    'invalid YAML makes plan and apply exit 1 (2 would read as "changes pending")',
    async () => {
      const stdin = 'roles: [\n';
      for (const command of ['plan', 'apply']) {
        const extra = command === 'apply' ? ['--yes'] : [];
        const run = await runCli([command, '-f', '-', '--database-url', sandbox.url, ...extra], { stdin });
        expect(run.stderr).toContain('invalid YAML');
        expect(run.code).toBe(1);
      }
      const validate = await runCli(['validate', '-f', '-'], { stdin });
      expect(validate.code).toBe(2);
    },
    SLOW,
  );
});
