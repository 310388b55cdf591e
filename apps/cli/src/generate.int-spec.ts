// `rolepolicy generate` end to end through a child process: options and their errors, warnings on
// stderr, passwords never exported, and example policies in the style of other tools' examples (a
// pgbedrock-style spec of roles, ownership and privileges; a pgroles-style profiles x schemas policy)
// applied to a database and generated back: a valid manifest, the same expansion, and `plan` in
// authoritative mode empty.

import { expandPolicy, type DesiredState, type GrantEntry, type PolicyContent } from '@rolepolicy/policy';
import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

import { parsePolicyText } from './policy-file.js';
import { runCli } from './test-support/run-cli.js';

let sandbox: PostgresSandbox;
const p = `gn_${sandboxId()}_`;
const SLOW = 120_000;
const PASSWORD = 'gen-Secret-Pa55';

async function query(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: sandbox.url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const env = (): Record<string, string> => ({ DATABASE_URL: sandbox.url });

beforeAll(async () => {
  sandbox = await createPostgresSandbox('cli_generate');
  await query(`
    CREATE ROLE "${p}owner"; CREATE ROLE "${p}app_owner";
    CREATE SCHEMA raw AUTHORIZATION "${p}owner"; CREATE SCHEMA mart AUTHORIZATION "${p}owner";
    CREATE SCHEMA sales AUTHORIZATION "${p}app_owner"; CREATE SCHEMA hr AUTHORIZATION "${p}app_owner";
    CREATE SCHEMA ops AUTHORIZATION "${p}app_owner";
    SET ROLE "${p}owner";
    CREATE TABLE raw.events (id int, email text); CREATE SEQUENCE raw.event_ids;
    CREATE TABLE mart.orders (id int); CREATE TABLE mart.customers (id int);
    CREATE FUNCTION mart.total(integer) RETURNS int LANGUAGE sql AS 'SELECT $1';
    CREATE FUNCTION mart.helper(integer) RETURNS int LANGUAGE sql AS 'SELECT $1';
    SET ROLE "${p}app_owner";
    CREATE TABLE sales.orders (id int); CREATE VIEW sales.recent AS SELECT 1 AS x; CREATE SEQUENCE sales.ids;
    CREATE TABLE hr.people (id int); CREATE VIEW hr.recent AS SELECT 1 AS x; CREATE SEQUENCE hr.ids;
    CREATE TABLE ops.jobs (id int); CREATE VIEW ops.recent AS SELECT 1 AS x;
    RESET ROLE;`);
});

afterAll(async () => {
  const admin = new pg.Client({ connectionString: sandbox.url });
  await admin.connect();
  const { rows } = await admin.query<{ rolname: string }>(
    'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
    [p],
  );
  for (const row of rows) await admin.query(`DROP OWNED BY "${row.rolname}" CASCADE`);
  await admin.end();
  await sandbox.drop();
  const cluster = new pg.Client({ connectionString: sandbox.adminUrl });
  await cluster.connect();
  for (const row of rows) await cluster.query(`DROP ROLE IF EXISTS "${row.rolname}"`);
  await cluster.end();
});

/** A pgbedrock-style spec: roles with attributes, schema ownership, read/write privileges, memberships. */
const bedrockStyle = (): string => `
reconciliation_mode: authoritative
roles:
  - { name: ${p}owner }
  - { name: ${p}analyst, login: true, connection_limit: 10, comment: Analytics team }
  - { name: ${p}etl, login: true, config: { statement_timeout: 5min } }
  - { name: ${p}readers }
  - { name: ${p}writers }
schemas:
  - { name: raw, owner: ${p}owner }
  - { name: mart, owner: ${p}owner }
grants:
  - { role: ${p}readers, object: { type: schema, name: raw }, privileges: [USAGE] }
  - { role: ${p}readers, object: { type: schema, name: mart }, privileges: [USAGE] }
  - { role: ${p}readers, object: { type: table, schema: raw, name: '*' }, privileges: [SELECT] }
  - { role: ${p}readers, object: { type: table, schema: mart, name: '*' }, privileges: [SELECT] }
  - { role: ${p}writers, object: { type: schema, name: raw }, privileges: [CREATE, USAGE] }
  - { role: ${p}writers, object: { type: table, schema: raw, name: '*' }, privileges: [DELETE, INSERT, SELECT, UPDATE] }
  - { role: ${p}writers, object: { type: sequence, schema: raw, name: '*' }, privileges: [USAGE] }
  - { role: ${p}analyst, object: { type: table, schema: mart, name: orders }, privileges: [SELECT] }
  - { role: ${p}analyst, object: { type: function, schema: mart, name: 'total(integer)' }, privileges: [EXECUTE] }
  - { role: ${p}readers, object: { type: database, name: ${sandbox.database} }, privileges: [CONNECT] }
default_privileges:
  - owner: ${p}owner
    schema: raw
    grant:
      - { on_type: table, privileges: [SELECT], role: ${p}readers }
      - { on_type: table, privileges: [DELETE, INSERT, SELECT, UPDATE], role: ${p}writers }
memberships:
  - { role: ${p}readers, members: [{ name: ${p}analyst }, { name: ${p}etl, admin: true }] }
  - { role: ${p}writers, members: [{ name: ${p}etl }] }
  - { role: pg_read_all_stats, members: [{ name: ${p}analyst }] }
`;

/** A pgroles-style policy: profiles x schemas with a role_pattern, default privileges, a login role. */
const profilesStyle = (): string => `
reconciliation_mode: authoritative
role_pattern: '${p}{schema}_{profile}'
default_owner: ${p}app_owner
profiles:
  viewer:
    grants:
      - { object: { type: schema }, privileges: [USAGE] }
      - { object: { type: table, name: '*' }, privileges: [SELECT] }
      - { object: { type: view, name: '*' }, privileges: [SELECT] }
    default_privileges:
      - { on_type: table, privileges: [SELECT] }
  editor:
    grants:
      - { object: { type: schema }, privileges: [USAGE] }
      - { object: { type: table, name: '*' }, privileges: [DELETE, INSERT, SELECT, UPDATE] }
      - { object: { type: sequence, name: '*' }, privileges: [SELECT, USAGE] }
    default_privileges:
      - { on_type: table, privileges: [DELETE, INSERT, SELECT, UPDATE] }
      - { on_type: sequence, privileges: [SELECT, USAGE] }
roles:
  - { name: ${p}app_owner }
  - { name: ${p}api, login: true }
schemas:
  - { name: sales, owner: ${p}app_owner, profiles: [viewer, editor] }
  - { name: hr, owner: ${p}app_owner, profiles: [viewer, editor] }
  - { name: ops, owner: ${p}app_owner, profiles: [viewer] }
memberships:
  - { role: ${p}sales_editor, members: [{ name: ${p}api }] }
  - { role: ${p}hr_viewer, members: [{ name: ${p}api, admin: true }] }
default_privileges:
  - owner: ${p}app_owner
    scope: { type: global }
    grant:
      - { on_type: function, privileges: [EXECUTE], role: PUBLIC, ensure: absent }
`;

/** A least-privilege setup as hardening guides write it: PUBLIC loses CONNECT and EXECUTE, a login role. */
const hardenedStyle = (): string => `
reconciliation_mode: authoritative
roles:
  - { name: ${p}web, login: true, connection_limit: 20, password_valid_until: '2030-01-01T00:00:00Z' }
  - { name: ${p}web_ro }
grants:
  - { role: PUBLIC, ensure: absent, object: { type: database, name: ${sandbox.database} }, privileges: [CONNECT, TEMPORARY] }
  - { role: ${p}web, object: { type: database, name: ${sandbox.database} }, privileges: [CONNECT] }
  - { role: PUBLIC, ensure: absent, object: { type: function, schema: mart, name: 'helper(integer)' }, privileges: [EXECUTE] }
  - { role: ${p}web_ro, object: { type: schema, name: mart }, privileges: [USAGE] }
  - { role: ${p}web_ro, object: { type: table, schema: mart, name: customers }, privileges: [SELECT] }
memberships:
  - { role: ${p}web_ro, members: [{ name: ${p}web }] }
`;

async function fileWith(name: string, text: string): Promise<string> {
  const file = path.join(tmpdir(), `${p}${name}.yaml`);
  await writeFile(file, text);
  return file;
}

function expand(content: unknown): DesiredState {
  const result = expandPolicy(content as PolicyContent, { policyName: 'example' });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.desired;
}

/** What an expansion grants to the example's roles (and the PUBLIC rules it names), as sorted JSON lines. */
function effect(desired: DesiredState, roles: ReadonlySet<string>, publicTargets: ReadonlySet<string>) {
  const target = (g: GrantEntry): string => JSON.stringify([g.object_type, g.schema, g.name]);
  const keepGrant = (g: GrantEntry): boolean =>
    roles.has(g.grantee) || (g.grantee === 'PUBLIC' && publicTargets.has(target(g)));
  const lines = (items: readonly unknown[]): string[] => items.map((item) => JSON.stringify(item)).sort();
  return {
    roles: lines(
      desired.roles.filter((r) => roles.has(r.name)).map((r) => ({ name: r.name, state: r.state })),
    ),
    grants: lines(desired.grants.filter(keepGrant)),
    grant_absences: lines(desired.grant_absences.filter(keepGrant)),
    default_privileges: lines(desired.default_privileges.filter((d) => roles.has(d.grantee))),
    default_privilege_absences: lines(desired.default_privilege_absences.filter((d) => roles.has(d.owner))),
    memberships: lines(desired.memberships.filter((m) => roles.has(m.member))),
  };
}

async function applyThenGenerateBack(name: string, policy: string, extra: readonly string[]): Promise<void> {
  const file = await fileWith(name, policy);
  const applied = await runCli(['apply', '-f', file, '--yes'], { env: env() });
  expect({ code: applied.code, stderr: applied.stderr }).toEqual({
    code: 0,
    stderr: expect.stringMatching(/^applied \d+ statements/),
  });
  const original = expand(parsePolicyText(policy).content);
  const roles = new Set(original.roles.map((r) => r.name));
  const publicTargets = new Set(
    [...original.grants, ...original.grant_absences]
      .filter((g) => g.grantee === 'PUBLIC')
      .map((g) => JSON.stringify([g.object_type, g.schema, g.name])),
  );
  for (const options of [[], ['--suggest-profiles']]) {
    const generated = await runCli(
      ['generate', '--roles', `${p}*`, '--mode', 'authoritative', ...extra, ...options],
      { env: env() },
    );
    expect(generated.code).toBe(0);
    if (options.length === 0) {
      // Stable: the same database gives the same bytes.
      const again = await runCli(['generate', '--roles', `${p}*`, '--mode', 'authoritative', ...extra], {
        env: env(),
      });
      expect(again.stdout).toBe(generated.stdout);
    }
    const back = expand(parsePolicyText(generated.stdout).content);
    expect(effect(back, roles, publicTargets)).toEqual(effect(original, roles, publicTargets));
    const backFile = await fileWith(`${name}-back`, generated.stdout);
    // The manifest passes the API server's admission (CRD schema, defaults, CEL rules), offline.
    expect(await runCli(['validate', '-f', backFile])).toMatchObject({ code: 0, stdout: 'valid\n' });
    const planned = await runCli(['plan', '-f', backFile], { env: env() });
    expect({ code: planned.code, stdout: planned.stdout }).toEqual({
      code: 0,
      stdout: expect.stringContaining('No changes'),
    });
  }
}

describe('rolepolicy generate', () => {
  it(
    'a pgbedrock-style spec applied, then generated back: same expansion, and plan is empty',
    async () => {
      await applyThenGenerateBack('bedrock', bedrockStyle(), ['--exclude', `${p}app_owner`]);
    },
    SLOW,
  );

  it(
    'a pgroles-style profiles x schemas policy applied, then generated back with and without --suggest-profiles',
    async () => {
      await applyThenGenerateBack('profiles', profilesStyle(), ['--exclude', `${p}owner`]);
      const suggested = await runCli(['generate', '--roles', `${p}*`, '--suggest-profiles'], { env: env() });
      expect(suggested.stderr).toContain('suggest-profiles: profile "editor" x schemas "hr", "sales"');
      expect(suggested.stderr).toContain('suggest-profiles: profile "viewer" x schemas "hr", "ops", "sales"');
      const content = parsePolicyText(suggested.stdout).content as PolicyContent;
      expect(Object.keys(content.profiles ?? {})).toEqual(['editor', 'viewer']);
      expect(content.role_pattern).toBe(`${p}{schema}_{profile}`);
    },
    SLOW,
  );

  it(
    'a hardening-style policy (PUBLIC revocations, a login role with an expiry) applied, then generated back',
    async () => {
      await applyThenGenerateBack('hardened', hardenedStyle(), []);
    },
    SLOW,
  );

  it(
    'never exports a password; reports column privileges, grant options, RLS policies and per-database settings',
    async () => {
      await query(`
        CREATE ROLE "${p}svc" LOGIN PASSWORD '${PASSWORD}';
        GRANT SELECT (email) ON raw.events TO "${p}svc";
        GRANT SELECT ON mart.orders TO "${p}svc" WITH GRANT OPTION;
        CREATE POLICY own_rows ON raw.events TO "${p}svc" USING (true);
        ALTER ROLE "${p}svc" IN DATABASE "${sandbox.database}" SET work_mem = '8MB';`);
      const run = await runCli(['generate', '--roles', `${p}svc`, '--name', 'svc', '--namespace', 'data'], {
        env: env(),
      });
      expect(run.code).toBe(0);
      for (const text of [run.stdout, run.stderr]) {
        expect(text).not.toContain(PASSWORD);
        expect(text).not.toContain('SCRAM-SHA-256');
        expect(text).not.toContain(sandbox.url);
      }
      const content = parsePolicyText(run.stdout).content as PolicyContent;
      expect(content.roles).toEqual([{ name: `${p}svc`, login: true }]);
      expect(run.stdout).toContain('# has a password, which is never exported');
      expect(run.stdout).toMatch(/namespace: data/);
      expect(run.stderr).toContain(
        `warning: "${p}svc" holds SELECT on raw.events.email (column privilege): the spec cannot express it`,
      );
      expect(run.stderr).toContain(`warning: "${p}svc" holds SELECT on mart.orders WITH GRANT OPTION`);
      expect(run.stderr).toContain(
        `warning: "${p}svc" is named by row-level security policy own_rows on raw.events`,
      );
      expect(run.stderr).toContain(`warning: "${p}svc" has the setting work_mem=8MB in database`);
      expect(run.stdout).toContain(`# - "${p}svc" holds SELECT on raw.events.email (column privilege)`);
    },
    SLOW,
  );

  it(
    'refuses bad options with an error naming the option',
    async () => {
      const missing = await runCli(['generate'], { env: env() });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("required option '--roles <glob>' not specified");
      const mode = await runCli(['generate', '--roles', 'x', '--mode', 'adopt'], { env: env() });
      expect(mode.code).toBe(1);
      expect(mode.stderr).toContain("option '--mode <mode>' argument 'adopt' is invalid");
      const name = await runCli(['generate', '--roles', 'x', '--name', 'Not_A_Name'], { env: env() });
      expect(name.stderr).toBe(
        'rolepolicy: --name "Not_A_Name" is not a valid Kubernetes name (lowercase letters, digits and \'-\', at most 253 characters)\n',
      );
      const none = await runCli(['generate', '--roles', `${p}nothing_*`], { env: env() });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(
        `rolepolicy: --roles "${p}nothing_*" matched no role that can be managed`,
      );
      const database = await runCli(['generate', '--roles', 'x'], { env: {} });
      expect(database.stderr).toBe('rolepolicy: no database: pass --database-url or set DATABASE_URL\n');
    },
    SLOW,
  );
});
