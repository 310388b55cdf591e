// The `rolepolicy` CLI end to end through child processes on the real PostgreSQL: validate exit codes,
// plan exit 0/2, apply then plan exits 0, digest guard, passwords from the environment, redaction.

import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';

import { runCli } from './test-support/run-cli.js';

let sandbox: PostgresSandbox;
const prefix = `rp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
/** Each CLI run is a fresh Node process; on a loaded CI machine a start can take seconds. */
const SLOW = 120_000;

beforeAll(async () => {
  sandbox = await createPostgresSandbox('cli');
});

afterAll(async () => {
  const client = new pg.Client({ connectionString: sandbox.url });
  await client.connect();
  const { rows } = await client.query<{ rolname: string }>(
    'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
    [prefix],
  );
  for (const row of rows) await client.query(`DROP OWNED BY "${row.rolname}" CASCADE`);
  await client.end();
  await sandbox.drop();
  const admin = new pg.Client({ connectionString: sandbox.adminUrl });
  await admin.connect();
  for (const row of rows) await admin.query(`DROP ROLE IF EXISTS "${row.rolname}"`);
  await admin.end();
});

const policyYaml = (extra = ''): string => `
roles:
  - name: ${r('app')}
    login: true
    comment: the app
  - name: ${r('reader')}
schemas:
  - name: ${r('s')}
grants:
  - role: ${r('reader')}
    privileges: [USAGE]
    object: { type: schema, name: ${r('s')} }
memberships:
  - role: ${r('reader')}
    members: [{ name: ${r('app')} }]
${extra}`;

describe('rolepolicy validate', () => {
  it(
    'exits 0 for valid content',
    async () => {
      const run = await runCli(['validate', '-f', '-'], { stdin: policyYaml() });
      expect(run).toMatchObject({ code: 0, stdout: 'valid\n' });
    },
    SLOW,
  );

  it(
    'exits 2 and prints every error with its path',
    async () => {
      const run = await runCli(['validate', '-f', '-'], {
        stdin: `grants:\n  - role: x\n    privileges: [FLY]\n    object: { type: table, schema: s, name: t }\n  - role: y\n    privileges: [SELECT]\n    object: { type: nonsense }\n`,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('spec.grants[0].privileges[0]');
      expect(run.stderr).toContain('spec.grants[1].object.type');
    },
    SLOW,
  );

  it(
    'a PostgresPolicy manifest is also admitted offline, rejections printed as the API server would',
    async () => {
      const manifest = `apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicy
metadata: { name: demo, namespace: default }
spec:
  connection: { secretRef: { name: db } }
  grants:
    - role: app
      privileges: [CONNECT]
      object: { type: database }
`;
      const run = await runCli(['validate', '-f', '-'], { stdin: manifest });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('database grant targets must set name');
    },
    SLOW,
  );

  it(
    'an unreadable file is an error (exit 1)',
    async () => {
      const run = await runCli(['validate', '-f', '/nonexistent/policy.yaml']);
      expect(run.code).toBe(1);
    },
    SLOW,
  );
});

describe('rolepolicy plan and apply', () => {
  it(
    'plan exits 2 with pending changes, apply --yes converges, and plan then exits 0',
    async () => {
      const env = { DATABASE_URL: sandbox.url };
      const before = await runCli(['plan', '-f', '-', '--format', 'json'], { env, stdin: policyYaml() });
      expect(before.code).toBe(2);
      const planned = JSON.parse(before.stdout) as {
        changes: { kind: string }[];
        changeDigest: string;
        sql: string;
      };
      expect(planned.changes.map((change) => change.kind)).toEqual(
        expect.arrayContaining(['create_role', 'create_schema', 'grant', 'add_member']),
      );
      expect(planned.changeDigest).toMatch(/^sha256:[0-9a-f]{64}$/);

      const refused = await runCli(['apply', '-f', '-'], { env, stdin: policyYaml() });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--yes');

      const wrongDigest = `sha256:${'0'.repeat(64)}`;
      const guarded = await runCli(['apply', '-f', '-', '--yes', '--expect-digest', wrongDigest], {
        env,
        stdin: policyYaml(),
      });
      expect(guarded.code).toBe(1);
      expect(guarded.stderr).toContain('--expect-digest');

      const applied = await runCli(['apply', '-f', '-', '--yes', '--expect-digest', planned.changeDigest], {
        env,
        stdin: policyYaml(),
      });
      expect(applied.stderr).toContain('applied');
      expect(applied.code).toBe(0);

      const after = await runCli(['plan', '-f', '-'], { env, stdin: policyYaml() });
      expect(after.stdout).toContain('No changes');
      expect(after.code).toBe(0);
    },
    SLOW,
  );

  it(
    'a PostgresPolicy manifest on stdin plans its spec',
    async () => {
      const manifest = `apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicy
metadata: { name: demo, namespace: default }
spec:
  connection: { secretRef: { name: db } }
  mode: apply
  approval: auto
${policyYaml()
  .split('\n')
  .map((line) => `  ${line}`)
  .join('\n')}`;
      const run = await runCli(['plan', '-f', '-', '--database-url', sandbox.url], { stdin: manifest });
      expect(run.stdout).toContain('No changes');
      expect(run.code).toBe(0);
    },
    SLOW,
  );

  it(
    'secretRef passwords come from ROLEPOLICY_PASSWORD_<SECRET>_<KEY> and are never printed',
    async () => {
      const secret = 'Very-Secret-Password-42';
      const yaml = `roles:\n  - name: ${r('pw')}\n    login: true\n    password: { secretRef: { name: app-db }, secretKey: password }\n`;
      const missing = await runCli(['apply', '-f', '-', '--yes'], {
        env: { DATABASE_URL: sandbox.url },
        stdin: yaml,
      });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('ROLEPOLICY_PASSWORD_APP_DB_PASSWORD');
      const env = { DATABASE_URL: sandbox.url, ROLEPOLICY_PASSWORD_APP_DB_PASSWORD: secret };
      const applied = await runCli(['apply', '-f', '-', '--yes', '--format', 'sql'], { env, stdin: yaml });
      expect(applied.code).toBe(0);
      expect(applied.stdout).toContain(`PASSWORD '[REDACTED]'`);
      expect(`${applied.stdout}${applied.stderr}`).not.toContain(secret);
      expect(`${applied.stdout}${applied.stderr}`).not.toContain('SCRAM-SHA-256$');
      const login = new pg.Client({
        connectionString: sandbox.url.replace('postgres@', `${r('pw')}:${secret}@`),
      });
      await login.connect();
      await login.end();
    },
    SLOW,
  );

  it(
    'generated passwords are printed once to stderr only with --show-generated',
    async () => {
      const yaml = `roles:\n  - name: ${r('gen')}\n    login: true\n    password: { generate: { length: 20 } }\n`;
      const run = await runCli(['apply', '-f', '-', '--yes', '--show-generated'], {
        env: { DATABASE_URL: sandbox.url },
        stdin: yaml,
      });
      expect(run.code).toBe(0);
      const match = /generated password for role "[^"]+": (\S+)/.exec(run.stderr);
      expect(match?.[1]).toHaveLength(20);
      expect(run.stdout).not.toContain(match![1]!);
    },
    SLOW,
  );

  it(
    'apply on a database whose owner turned standard_conforming_strings off stores a hostile comment as written (ADR 0023)',
    async () => {
      const hostile = await createPostgresSandbox('cli_hostile');
      try {
        const owner = r('owner');
        const admin = new pg.Client({ connectionString: hostile.url });
        await admin.connect();
        await admin.query(
          `CREATE ROLE "${owner}" LOGIN; ALTER DATABASE "${hostile.database}" OWNER TO "${owner}"`,
        );
        await admin.end();
        const asOwner = new pg.Client({ connectionString: hostile.url.replace('postgres@', `${owner}@`) });
        await asOwner.connect();
        await asOwner.query(`ALTER DATABASE "${hostile.database}" SET standard_conforming_strings = off`);
        await asOwner.end();
        // YAML single quotes: '' is one quote, the backslash is literal.
        const comment = `x\\'; CREATE ROLE "${r('cli_pwned')}" SUPERUSER; --`;
        const yaml = `roles:\n  - name: ${r('cli_victim')}\n    comment: '${comment.replaceAll("'", "''")}'\n`;
        const env = { DATABASE_URL: hostile.url };
        const applied = await runCli(['apply', '-f', '-', '--yes'], { env, stdin: yaml });
        expect(applied.code).toBe(0);
        const check = new pg.Client({ connectionString: sandbox.adminUrl });
        await check.connect();
        const { rows } = await check.query<{ rolname: string; comment: string | null }>(
          `SELECT rolname, pg_catalog.shobj_description(oid, 'pg_authid') AS comment FROM pg_catalog.pg_roles
            WHERE rolname = ANY($1::text[]) ORDER BY rolname`,
          [[r('cli_victim'), r('cli_pwned')]],
        );
        await check.end();
        expect(rows).toEqual([{ rolname: r('cli_victim'), comment }]);
      } finally {
        await hostile.drop();
      }
    },
    SLOW,
  );

  it(
    'a connection failure exits 1 without printing the password in the URL',
    async () => {
      const url = `postgres://postgres:Hunter2-Secret@127.0.0.1:1/${sandbox.database}`;
      const run = await runCli(['plan', '-f', '-', '--database-url', url], { stdin: policyYaml() });
      expect(run.code).toBe(1);
      expect(`${run.stdout}${run.stderr}`).not.toContain('Hunter2-Secret');
      expect(run.stderr).toContain('rolepolicy:');
    },
    SLOW,
  );
});
