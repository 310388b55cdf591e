// `rolepolicy candidate diff` against a real PostgreSQL: the changes a proposal would make, its content
// digest (the one the service stamps on the candidate), exit 2 with changes, nothing executed.
import { contentDigest } from '@rolepolicy/policy';
import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';

import { runCli } from './test-support/run-cli.js';

let sandbox: PostgresSandbox;
const role = `rp_${sandboxId()}_proposed`;
const SLOW = 120_000;

beforeAll(async () => {
  sandbox = await createPostgresSandbox('cand_cli');
});

afterAll(async () => {
  await sandbox.drop();
});

const manifest = `
apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicyCandidate
metadata: { name: add-reader, namespace: team-a }
spec:
  policyRef: { name: orders }
  content:
    roles:
      - name: ${role}
        login: false
`;

it(
  'prints the changes and the content digest, exits 2, and runs no SQL',
  async () => {
    const run = await runCli(['candidate', 'diff', '-f', '-', '--database-url', sandbox.url], {
      stdin: manifest,
    });
    const digest = contentDigest({ roles: [{ name: role, login: false }] }).digest;
    expect(run.stderr).not.toContain(sandbox.url);
    expect(run.stdout).toContain(`content digest: ${digest} (rolepolicy.io/policy-content/v2)`);
    expect(run.stdout).toContain(role);
    expect(run.code).toBe(2);
    const client = new pg.Client({ connectionString: sandbox.url });
    await client.connect();
    const { rows } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
    await client.end();
    expect(rows).toEqual([]);
  },
  SLOW,
);

it(
  'refuses a file without a candidate, naming the field',
  async () => {
    const run = await runCli(['candidate', 'diff', '-f', '-', '--database-url', sandbox.url], {
      stdin: manifest.replace('policyRef: { name: orders }', ''),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('spec.policyRef.name');
  },
  SLOW,
);
