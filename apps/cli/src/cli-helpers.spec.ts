// Pure parts of the CLI: the password environment variable naming rule, reading -f input as bare
// content or as a PostgresPolicy manifest (exit codes are covered end to end in cli.int-spec.ts).

import { Readable } from 'node:stream';

import { RECONCILIATION_MODES, type PlanResult } from '@rolepolicy/policy';

import { ADDITIVE_IGNORES_ABSENCE, reportPlanProblems } from './commands/plan.js';
import { CLI_RECONCILIATION_MODES } from './database-commands.js';
import type { CliIo } from './io.js';
import { generatePassword, passwordEnvName } from './passwords.js';
import type { CliPlan } from './planning.js';
import { parsePolicyText, requireContent } from './policy-file.js';

describe('secretRef passwords come from ROLEPOLICY_PASSWORD_<SECRETNAME>_<SECRETKEY>', () => {
  it('upper-cases and turns every non-alphanumeric character into _', () => {
    expect(passwordEnvName('app-db', 'password')).toBe('ROLEPOLICY_PASSWORD_APP_DB_PASSWORD');
    expect(passwordEnvName('team.secrets', 'app_reader')).toBe('ROLEPOLICY_PASSWORD_TEAM_SECRETS_APP_READER');
  });

  it('generated passwords have the requested length and differ between calls', () => {
    const a = generatePassword(32);
    expect(a).toHaveLength(32);
    expect(generatePassword(32)).not.toBe(a);
  });
});

describe('--mode offers exactly the reconciliation modes a policy accepts', () => {
  it("the choices written out for a fast startup are the policy engine's modes, in its order", () => {
    expect(CLI_RECONCILIATION_MODES).toEqual(RECONCILIATION_MODES);
  });
});

describe('-f accepts bare policy content or a whole PostgresPolicy manifest', () => {
  it('bare content is used as it is', () => {
    const loaded = parsePolicyText('roles:\n  - name: app\n');
    expect(loaded).toMatchObject({
      isManifest: false,
      policyName: 'cli',
      content: { roles: [{ name: 'app' }] },
    });
  });

  it("a manifest's spec content fields are used; connection and operator fields are not content", () => {
    const loaded = parsePolicyText(`apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicy
metadata: { name: prod-access }
spec:
  connection: { secretRef: { name: db } }
  mode: apply
  allow_schema_owner_transfers: true
  roles: [{ name: app }]
`);
    expect(loaded).toMatchObject({
      isManifest: true,
      policyName: 'prod-access',
      allowSchemaOwnerTransfers: true,
    });
    expect(loaded.content).toEqual({ roles: [{ name: 'app' }] });
  });

  it('manifests without exactly one PostgresPolicy cannot be planned', () => {
    const loaded = parsePolicyText(`apiVersion: rolepolicy.io/v1alpha1
kind: EphemeralAccessPolicy
metadata: { name: x }
spec: {}
`);
    expect(() => requireContent(loaded)).toThrow('exactly one PostgresPolicy');
  });
});

describe('plan problems are reported on stderr', () => {
  const report = (plan: Partial<PlanResult>): string => {
    let stderr = '';
    const io: CliIo = {
      stdout: () => undefined,
      stderr: (text) => void (stderr += text),
      stdin: Readable.from([]),
      env: {},
      interactive: false,
    };
    const full = { warnings: [], blockers: [], ownerTransferBlocked: false, additiveIgnoredAbsence: false };
    reportPlanProblems({ plan: { ...full, ...plan } } as unknown as CliPlan, io);
    return stderr;
  };

  it('additive mode says that it ignores ensure: absent assertions (the spec asks for a warning)', () => {
    expect(report({ additiveIgnoredAbsence: true })).toBe(`warning: ${ADDITIVE_IGNORES_ABSENCE}\n`);
    expect(report({ additiveIgnoredAbsence: false })).toBe('');
  });
});
