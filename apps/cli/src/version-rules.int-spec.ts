// The CLI meets the server_compatibility rules as a plan-time error: per-membership inherit on a server
// older than PostgreSQL 16 refuses the plan (exit 1) and names the fix, and apply changes nothing.

import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';

import { runCli } from './test-support/run-cli.js';

const prefix = `rp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
const policyYaml = (): string => `
roles:
  - name: ${r('group')}
  - name: ${r('app')}
memberships:
  - role: ${r('group')}
    members: [{ name: ${r('app')}, inherit: false }]
`;

describe.each([{ major: 14 as const }, { major: 15 as const }])('on PostgreSQL $major', ({ major }) => {
  let sandbox: PostgresSandbox;
  beforeAll(async () => {
    sandbox = await createPostgresSandbox('cli_rules', major);
  }, 60_000);
  afterAll(async () => {
    await sandbox.drop();
  });

  it('plan and apply refuse per-membership inherit: false with the server_compatibility message', async () => {
    const env = { DATABASE_URL: sandbox.url };
    for (const args of [['plan'], ['apply', '--yes']]) {
      const run = await runCli([...args, '-f', '-'], { env, stdin: policyYaml() });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('the plan is blocked:');
      expect(run.stderr).toContain(
        `membership ${r('group')} -> ${r('app')} declares inherit: false, but PostgreSQL ${major} has no per-membership inherit option (PostgreSQL 16+)`,
      );
    }
    const client = new pg.Client({ connectionString: sandbox.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)', [
        prefix,
      ]);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
