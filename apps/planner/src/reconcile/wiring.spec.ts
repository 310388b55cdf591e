// Pure parts of the planner wiring: error reasons, database address keys, commands for steps (order,
// cleared fields, uid binding), the trigger signatures, executor results as lifecycle reports.
import type { CachedObject, ExecuteResultV1 } from '@rolepolicy/contracts';
import { commandsOf, policyStatusCommand, replacingPatch } from '../planning/gateway-commands.js';
import { databaseAddress, inspectFailure, shownAddress } from '../planning/planning.js';
import { reportOf } from './execution-results.js';
import { controllerUid, planSignature, policySignature } from './triggers.js';
import { decideReconcile } from '@rolepolicy/plan-lifecycle';
import { at, computed, policy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';

describe('inspectFailure', () => {
  it('maps transient failures to DatabaseConnectionFailed and permanent ones by SQLSTATE', () => {
    expect(inspectFailure({ class: 'transient', code: 'ECONNREFUSED', message: 'm' })).toEqual({
      class: 'transient',
      reason: 'DatabaseConnectionFailed',
      message: 'm',
    });
    expect(inspectFailure({ class: 'permanent', code: '42501', message: 'm' }).reason).toBe(
      'InsufficientPrivileges',
    );
    expect(inspectFailure({ class: 'permanent', code: '42P01', message: 'm' }).reason).toBe(
      'MissingDatabaseObject',
    );
    // A refused login or an absent database is a failed connection (the peer operator's reason).
    for (const code of ['28P01', '28000', '3D000']) {
      expect(inspectFailure({ class: 'permanent', code, message: 'm' })).toEqual({
        class: 'permanent',
        reason: 'DatabaseConnectionFailed',
        message: 'm',
      });
    }
    expect(inspectFailure({ class: 'permanent', code: 'InvalidDatabaseTarget', message: 'm' }).reason).toBe(
      'InvalidDatabaseTarget',
    );
    expect(inspectFailure({ class: 'permanent', code: null, message: 'm' }).reason).toBe(
      'DatabaseInspectionFailed',
    );
  });
});

describe('Secret-sourced parts in what the planner writes (ADR 0018)', () => {
  const params = {
    host: 'pg.victim',
    port: 6432,
    dbname: 'payroll',
    username: 'u',
    password: null,
    sslMode: null,
  };
  const sourced = {
    params,
    setRole: null,
    secretSources: [
      { part: 'host' as const, secret: 'victim', key: 'host' },
      { part: 'port' as const, secret: 'victim', key: 'port' },
    ],
  };

  it('inspectFailure redacts the reply again with the policy connection', () => {
    const message = 'connect ECONNREFUSED 10.0.0.9:6432 (pg.victim)';
    expect(inspectFailure({ class: 'transient', code: 'ECONNREFUSED', message }, sourced).message).toBe(
      'connect ECONNREFUSED [Secret "victim" key "host"]:[Secret "victim" key "port"] ([Secret "victim" key "host"])',
    );
  });

  it('shownAddress (managed_database_identity) names Secrets instead of their values', () => {
    expect(shownAddress(sourced)).toBe('[Secret "victim" key "host"]:[Secret "victim" key "port"]/payroll');
    expect(shownAddress({ params, setRole: null })).toBe('pg.victim:6432/payroll');
    expect(
      shownAddress({
        url: 'postgres://u@pg.victim/payroll',
        setRole: null,
        secretSources: [{ part: 'url', secret: 'conn', key: 'DATABASE_URL' }],
      }),
    ).toBe('[Secret "conn" key "DATABASE_URL"]');
  });
});

describe('databaseAddress', () => {
  it('keys URL and params connections by host:port/dbname without credentials', () => {
    expect(databaseAddress({ url: 'postgres://u:secret@DB.Example:6543/app', setRole: null })).toBe(
      'db.example:6543/app',
    );
    expect(databaseAddress({ url: 'postgresql://u:secret@db.example/app', setRole: null })).toBe(
      'db.example:5432/app',
    );
    expect(
      databaseAddress({
        params: {
          host: 'DB.example',
          port: 5432,
          dbname: 'app',
          username: 'u',
          password: 'secret',
          sslMode: null,
        },
        setRole: null,
      }),
    ).toBe('db.example:5432/app');
  });
});

describe('gateway commands', () => {
  it('sends nulls for status fields the new status drops, so a merge patch clears them', () => {
    expect(replacingPatch({ a: 1, current_plan_ref: { name: 'p' } }, { a: 2 })).toEqual({
      a: 2,
      current_plan_ref: null,
    });
  });

  it('creates a plan with its status in one apply-resource, and binds policy status writes to the uid', () => {
    const self = policy();
    const decision = decideReconcile({
      policy: self,
      plans: [],
      conflict: { kind: 'clear' },
      outcome: { kind: 'computed', plan: computed('A') },
      now: at(0),
      jitter: 0,
    });
    const commands = decision.steps.flatMap((step) => commandsOf(step, self));
    const create = commands.find((c) => c.command === 'apply-resource');
    expect(create).toMatchObject({
      target: { kind: 'PostgresPolicyPlan' },
      status: { phase: expect.any(String) },
    });
    expect((create as { object: Record<string, unknown> }).object['status']).toBeUndefined();
    const statusWrite = policyStatusCommand(self, decision.status);
    expect(statusWrite.target).toMatchObject({ kind: 'PostgresPolicy', uid: self.metadata.uid });
    // The plan exists before the policy status names it.
    const order = commands.map((c) => `${c.command}:${c.target.kind}`);
    expect(order.indexOf('apply-resource:PostgresPolicyPlan')).toBeLessThan(
      order.indexOf('patch-status:PostgresPolicy') === -1
        ? Infinity
        : order.indexOf('patch-status:PostgresPolicy'),
    );
    // All of them in the policy's ordering (ADR 0016): the gateway keeps their order, other policies' go aside.
    const key = `policy/${self.metadata.namespace}/${self.metadata.name}`;
    expect([...commands, statusWrite].map((c) => c.orderingKey)).toEqual(
      [...commands, statusWrite].map(() => key),
    );
  });
});

const obj = (metadata: Record<string, unknown>, status?: unknown): CachedObject =>
  ({
    apiVersion: 'v1',
    kind: 'X',
    metadata: { name: 'n', namespace: 'ns', ...metadata },
    status,
  }) as CachedObject;

describe('trigger signatures', () => {
  it('ignore status-only policy updates but see generation and the force annotation', () => {
    const base = policySignature(obj({ uid: 'u', generation: 1, resourceVersion: '1' }));
    expect(policySignature(obj({ uid: 'u', generation: 1, resourceVersion: '2' }, { x: 1 }))).toBe(base);
    expect(policySignature(obj({ uid: 'u', generation: 2 }))).not.toBe(base);
    expect(
      policySignature(
        obj({ uid: 'u', generation: 1, annotations: { 'rolepolicy.io/reconcile-requested-at': 't' } }),
      ),
    ).not.toBe(base);
  });

  it('wake a policy on a plan decision, not on a phase the executor writes', () => {
    const pending = planSignature(
      obj({}, { phase: 'Pending', conditions: [{ type: 'Approved', status: 'False' }] }),
    );
    const approved = planSignature(
      obj({}, { phase: 'Pending', conditions: [{ type: 'Approved', status: 'True' }] }),
    );
    const applied = planSignature(
      obj({}, { phase: 'Applied', conditions: [{ type: 'Approved', status: 'True' }] }),
    );
    expect(approved).not.toBe(pending);
    expect(applied).toBe(approved);
  });

  it('map a plan to its controlling policy by uid', () => {
    const plan = obj({
      ownerReferences: [
        { kind: 'PostgresPolicy', uid: 'other', controller: false },
        { kind: 'PostgresPolicy', uid: 'owner', controller: true },
      ],
    });
    expect(controllerUid(plan)).toBe('owner');
  });
});

describe('reportOf', () => {
  const base: ExecuteResultV1 = {
    v: 1,
    plan: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicyPlan', namespace: 'ns', name: 'p' },
    idempotencyKey: 'k',
    phase: 'Applied',
    reason: 'Executed',
    message: 'ok',
    approvedDigest: 'sha256:a',
    recomputedDigest: 'sha256:a',
    executedDigest: 'sha256:a',
    statementCount: 1,
    reportedAt: '2026-01-01T00:00:00Z',
  };

  it('turns executor phases into lifecycle reports', () => {
    expect(reportOf({ ...base, appliedPasswordSourceVersions: { r: 's:k:1' } })).toEqual({
      kind: 'applied',
      appliedPasswordSourceVersions: { r: 's:k:1' },
    });
    expect(reportOf({ ...base, phase: 'Applying' })).toBe('ignore');
    expect(reportOf({ ...base, phase: 'Skipped' })).toBe('reconcile');
    expect(reportOf({ ...base, phase: 'Superseded', reason: 'DigestMismatch' })).toMatchObject({
      kind: 'refused',
      verdict: { kind: 'superseded', reason: 'DigestMismatch' },
    });
    expect(reportOf({ ...base, phase: 'Failed', reason: 'TargetIdentityUnavailable' })).toMatchObject({
      kind: 'refused',
      verdict: { kind: 'fail_closed' },
    });
    expect(
      reportOf({ ...base, phase: 'Failed', reason: 'ExecutionFailed', errorClass: 'transient' }),
    ).toEqual({
      kind: 'failed',
      error: { class: 'transient', reason: 'ApplyFailed', message: 'ok' },
    });
    const failedWith = (sqlState: string) =>
      reportOf({
        ...base,
        phase: 'Failed',
        reason: 'ExecutionFailed',
        lastError: { message: 'm', statementIndex: 0, statement: 'CREATE ROLE "x"', sqlState },
      });
    // The policy says why in the peer operator's words; the plan keeps the executor's reason.
    expect(failedWith('42501')).toMatchObject({ error: { reason: 'InsufficientPrivileges' } });
    expect(failedWith('42P01')).toMatchObject({ error: { reason: 'MissingDatabaseObject' } });
    expect(failedWith('40P01')).toMatchObject({ error: { reason: 'ApplyFailed' } });
  });
});
