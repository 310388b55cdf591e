// `rolepolicy review` through child processes on the real PostgreSQL: JSON that validates against the
// published schema, HTML, the terminal summary with findings first, and no secret in any format.
import { validateReviewArtifact } from '@rolepolicy/review';
import {
  createPostgresSandbox,
  DEFAULT_PG_ADMIN_URL,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';

import { dropRolesWithPrefix, runSql } from '../../../libs/catalog/src/test-support/scope.js';
import { runCli } from './test-support/run-cli.js';

let sandbox: PostgresSandbox;
const prefix = `rp_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;
const SLOW = 120_000;
const PASSWORD = 'Sup3r-secret-pw-for-review';

beforeAll(async () => {
  sandbox = await createPostgresSandbox('cli_review');
  await runSql(
    sandbox.url,
    `CREATE ROLE "${r('old')}" LOGIN; CREATE TABLE public."${r('t')}" (id int); ALTER TABLE public."${r('t')}" OWNER TO "${r('old')}";`,
  );
});

afterAll(async () => {
  await dropRolesWithPrefix(DEFAULT_PG_ADMIN_URL, [sandbox.url], prefix);
  await sandbox.drop();
});

const policy = `
roles:
  - name: ${r('app')}
    login: true
    comment: secret comment text
    config: { statement_timeout: "31s" }
    password: { secretRef: { name: app-db }, secretKey: password }
  - name: ${r('partner')}
    external: true
schemas:
  - name: ${r('s')}
grants:
  - role: ${r('partner')}
    privileges: [USAGE]
    object: { type: schema, name: ${r('s')} }
retirements:
  - role: ${r('old')}
`;

function env(): Record<string, string> {
  return { DATABASE_URL: sandbox.url, ROLEPOLICY_PASSWORD_APP_DB_PASSWORD: PASSWORD };
}

describe('rolepolicy review', () => {
  it(
    '--format json prints an artifact that validates, with caller-supplied provenance and no secret',
    async () => {
      const run = await runCli(
        [
          'review',
          '-f',
          '-',
          '--format',
          'json',
          '--commit',
          'abc1234',
          '--target-label',
          'sandbox',
          '--captured-at',
          '2026-11-25T12:00:00Z',
        ],
        { stdin: policy, env: env() },
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const artifact = JSON.parse(run.stdout) as unknown;
      const result = validateReviewArtifact(artifact);
      expect(result.ok ? [] : result.errors).toEqual([]);
      if (!result.ok) return;
      expect(result.artifact.provenance).toMatchObject({
        captured_at: '2026-11-25T12:00:00Z',
        policy: { commit: 'abc1234' },
        target_label: 'sandbox',
        pg_major_version: 15,
      });
      expect(result.artifact.recorded.findings.map((f) => f.kind)).toContain('required_role_unavailable');
      expect(
        result.artifact.preflight.find((p) => p.check === 'role_drop_safety')?.issues.map((i) => i.code),
      ).toEqual(['owns_objects']);
      for (const secret of [PASSWORD, 'secret comment text', '31s', 'app-db', sandbox.url, 'SCRAM-SHA-256']) {
        expect(run.stdout).not.toContain(secret);
      }
    },
    SLOW,
  );

  it(
    '--format text lists findings before the phases; --format html is one self-contained page',
    async () => {
      const text = await runCli(
        ['review', '-f', '-', '--format', 'text', '--captured-at', '2026-11-25T12:00:00Z'],
        {
          stdin: policy,
          env: env(),
        },
      );
      expect(text.code).toBe(0);
      expect(text.stdout.indexOf('Findings')).toBeLessThan(text.stdout.indexOf('Phase create'));
      expect(text.stdout).toContain(`required_role_unavailable: role "${r('partner')}" does not exist`);
      expect(text.stdout).toMatch(/Review of rp_test_cli_review_\w+ on 127\.0\.0\.1:5432/);
      const html = await runCli(['review', '-f', '-', '--format', 'html'], { stdin: policy, env: env() });
      expect(html.code).toBe(0);
      expect(html.stdout.startsWith('<!DOCTYPE html>')).toBe(true);
      for (const out of [text.stdout, html.stdout]) {
        for (const secret of [PASSWORD, 'secret comment text', sandbox.url])
          expect(out).not.toContain(secret);
      }
    },
    SLOW,
  );

  it(
    'plan prints the review findings and preflight issues to stderr before any SQL runs',
    async () => {
      const run = await runCli(['plan', '-f', '-'], { stdin: policy, env: env() });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `review: error required_role_unavailable: role "${r('partner')}" does not exist`,
      );
      expect(run.stderr).toContain(
        `review: preflight role_drop_safety owns_objects: role "${r('old')}" owns 1 object(s)`,
      );
      expect(run.stderr).not.toContain(PASSWORD);
    },
    SLOW,
  );

  it(
    'refuses a connection URL as --target-label and a malformed --captured-at',
    async () => {
      const label = await runCli(['review', '-f', '-', '--target-label', 'postgres://u:p@h/db'], {
        stdin: policy,
        env: env(),
      });
      expect(label.code).toBe(1);
      expect(label.stderr).toContain('--target-label must be a human-readable label, never a connection URL');
      expect(label.stderr).not.toContain('u:p@');
      const time = await runCli(['review', '-f', '-', '--captured-at', 'yesterday'], {
        stdin: policy,
        env: env(),
      });
      expect(time.code).toBe(1);
      expect(time.stderr).toContain('expected an RFC 3339 timestamp');
    },
    SLOW,
  );
});
