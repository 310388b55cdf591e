// The executor's decision under the lock, rule by rule: only an equal digest under the same encoding on
// the approved target runs SQL; identity trouble fails closed or supersedes; an empty re-plan is convergence.
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import { decideExecution, type Recomputed } from './decide.js';

const request: ExecuteRequestV2 = {
  v: 2,
  plan: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicyPlan', namespace: 'ns', name: 'p-1' },
  policy: {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicy',
    namespace: 'ns',
    name: 'p',
    uid: 'u',
  },
  changeDigest: 'sha256:approved',
  changeDigestEncoding: 'rolepolicy.io/approval-effect/v1',
  idempotencyKey: 'u/p-1/sha256:approved',
  target: 'ns/secret/DATABASE_URL',
  content: {},
  mode: 'authoritative',
  allowSchemaOwnerTransfers: false,
  requirePhysicalIdentity: false,
  approvedIdentity: { physical: '7001', logical: 'sha256:l' },
  passwordSources: {},
  appliedPasswordSourceVersions: {},
};

const same: Recomputed = {
  changeDigest: 'sha256:approved',
  changeDigestEncoding: 'rolepolicy.io/approval-effect/v1',
  changeCount: 3,
  blockers: [],
  ownerTransferBlocked: false,
  observed: { physical: '7001', logical: 'sha256:l' },
};

describe('decideExecution', () => {
  it('executes when the recomputed digest and encoding equal the approved ones on the approved target', () => {
    expect(decideExecution(request, same)).toEqual({ kind: 'execute' });
  });

  it('refuses a different recomputed digest as Superseded (approval binds to changeDigest)', () => {
    expect(decideExecution(request, { ...same, changeDigest: 'sha256:other' })).toMatchObject({
      kind: 'superseded',
      reason: 'DigestMismatch',
    });
  });

  it('never compares digests under different encodings', () => {
    expect(
      decideExecution(request, { ...same, changeDigestEncoding: 'rolepolicy.io/approval-effect/v2' }),
    ).toMatchObject({ kind: 'superseded', reason: 'DigestEncodingMismatch' });
  });

  it('an empty re-plan is convergence: a redelivered applied request runs nothing', () => {
    expect(decideExecution(request, { ...same, changeCount: 0, changeDigest: 'sha256:empty' })).toMatchObject(
      {
        kind: 'converged',
        reason: 'AlreadyConverged',
      },
    );
  });

  it('fails closed when the plan had a physical identity and it cannot be read now', () => {
    expect(
      decideExecution(request, { ...same, observed: { physical: null, logical: 'sha256:l' } }),
    ).toMatchObject({
      kind: 'fail_closed',
      reason: 'TargetIdentityUnavailable',
    });
  });

  it('fails closed when requirePhysicalIdentity is set and the identity is unreadable', () => {
    const strict = {
      ...request,
      requirePhysicalIdentity: true,
      approvedIdentity: { physical: null, logical: 'sha256:l' },
    };
    expect(
      decideExecution(strict, { ...same, observed: { physical: null, logical: 'sha256:l' } }),
    ).toMatchObject({
      kind: 'fail_closed',
      reason: 'PhysicalIdentityRequired',
    });
  });

  it('a changed target supersedes the approval even when the database is converged', () => {
    expect(
      decideExecution(request, {
        ...same,
        changeCount: 0,
        observed: { physical: '9999', logical: 'sha256:l' },
      }),
    ).toMatchObject({ kind: 'superseded', reason: 'TargetChanged' });
  });

  it('blockers and a blocked owner transfer refuse without SQL', () => {
    expect(
      decideExecution(request, { ...same, blockers: ['password source version for role a is unknown'] }),
    ).toMatchObject({ kind: 'fail_closed', reason: 'PlanBlocked' });
    expect(decideExecution(request, { ...same, ownerTransferBlocked: true })).toMatchObject({
      kind: 'fail_closed',
      reason: 'OwnerTransferBlocked',
    });
  });
});
