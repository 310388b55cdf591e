// What the scheduler records of an executor result: the plan's status, a Blocked request's error, the
// revocation lag of a revoke applied after expiry, and how a sweep is logged.
import type { Cached, ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { request, T0 } from '../lifecycle/test-support/fixtures.js';
import { afterResult, type ScopedResultRecord } from './after-result.js';

const iso = (ms: number) => new Date(ms).toISOString();
const ref = (kind: string, name: string, uid = `uid-${name}`) => ({
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind,
  namespace: 'team-a',
  name,
  uid,
});

function result(fields: Partial<ScopedExecuteResultV1>): ScopedExecuteResultV1 {
  return {
    v: 1,
    plan: ref('PostgresPolicyPlan', 'alice-read-revoke'),
    request: ref('EphemeralAccessRequest', 'alice-read', '1a2b3c4d-0000-0000-0000-000000000000'),
    policy: ref('PostgresPolicy', 'orders'),
    operation: 'Revoke',
    bundleHash: 'sha256:0123',
    idempotencyKey: 'k',
    outcome: 'Applied',
    statements: ['REVOKE "reader" FROM "alice";'],
    retained: [],
    reason: 'MembershipsRevoked',
    message: '1 membership revoked',
    reportedAt: iso(T0),
    ...fields,
  };
}

/** The fixture request, active for 600 s from T0 (its expiry T0 + 600 s); `denied` adds Denied=True. */
function active(denied = false): Cached<'ephemeralaccessrequest'> {
  const base = request({
    phase: 'Active',
    activatedAt: iso(T0),
    expiresAt: iso(T0 + 600_000),
    resolvedAccess: { grantedDuration: '600s' } as never,
    ...(denied
      ? { conditions: [{ type: 'Denied', status: 'True', reason: 'Denied', lastTransitionTime: iso(T0) }] }
      : {}),
  } as never);
  return base as Cached<'ephemeralaccessrequest'>;
}

const scoped = (r: ReturnType<typeof afterResult>): ScopedResultRecord => {
  if (r.kind !== 'scoped') throw new Error(`expected a scoped record, got ${r.kind}`);
  return r;
};

describe('afterResult', () => {
  it('records an applied revoke on the plan and measures its lag from the expiry', () => {
    const record = scoped(afterResult(result({}), active(), T0 + 605_000));
    expect(record.planStatus).toMatchObject({ phase: 'Applied', sqlStatements: 1 });
    expect(record.revocationLagSeconds).toBe(5);
    expect(record.requestError).toBeUndefined();
    expect(record.log).toEqual({
      level: 'log',
      line: 'scoped Revoke team-a/alice-read-revoke: Applied (MembershipsRevoked)',
    });
  });

  it('measures no lag before the expiry, for a denied request, for an activation, or for another request', () => {
    expect(scoped(afterResult(result({}), active(), T0 + 1_000)).revocationLagSeconds).toBeUndefined();
    expect(scoped(afterResult(result({}), active(true), T0 + 605_000)).revocationLagSeconds).toBeUndefined();
    const activate = result({ operation: 'Activate', reason: 'MembershipsGranted' });
    expect(scoped(afterResult(activate, active(), T0 + 605_000)).revocationLagSeconds).toBeUndefined();
    const recreated = { ...active(), metadata: { ...active().metadata, uid: 'another' } };
    expect(scoped(afterResult(result({}), recreated, T0 + 605_000)).revocationLagSeconds).toBeUndefined();
    expect(scoped(afterResult(result({}), undefined, T0 + 605_000)).revocationLagSeconds).toBeUndefined();
  });

  it('a Blocked result leaves the plan as it is and sets the request error (only on the same request)', () => {
    const blocked = result({
      outcome: 'Blocked',
      reason: 'TargetFingerprintChanged',
      message: 'moved',
      statements: [],
    });
    const record = scoped(afterResult(blocked, active(), T0));
    expect(record.planStatus).toBeNull();
    expect(record.requestError).toBe('Revoke blocked (TargetFingerprintChanged): moved');
    expect(scoped(afterResult(blocked, undefined, T0)).requestError).toBeUndefined();
  });

  it('a Failed result fails the plan with its reason', () => {
    const failed = result({
      operation: 'Activate',
      outcome: 'Failed',
      reason: 'RoleMissing',
      message: 'no role',
      statements: [],
    });
    const record = scoped(afterResult(failed, active(), T0));
    expect(record.planStatus).toMatchObject({ phase: 'Failed', lastError: 'RoleMissing: no role' });
    expect(record.requestError).toBeUndefined();
  });

  it('a sweep is only logged: routine when nothing was revoked, a warning when something was', () => {
    const sweep = (statements: string[], outcome: ScopedExecuteResultV1['outcome'] = 'Applied') =>
      afterResult(
        result({ operation: 'Sweep', statements, outcome, reason: 'Swept', message: 'm' }),
        active(),
        T0,
      );
    expect(sweep([])).toEqual({
      kind: 'sweep',
      log: { level: 'log', line: 'sweep of team-a/orders: Applied (Swept): m' },
    });
    expect(sweep(['REVOKE "reader" FROM "mallory";']).log.level).toBe('warn');
    expect(sweep([], 'Failed').log.level).toBe('warn');
  });
});
