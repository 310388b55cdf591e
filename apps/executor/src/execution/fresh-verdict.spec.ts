// The executor's check of the fresh plan and policy under the lock: only a live, approved plan of an
// unsuspended, non-observe policy that still exists (same uid) proceeds; a leftover Applying plan is ours.
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import type { PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import { freshVerdict, type FreshState, type Recheck } from './fresh-verdict.js';
import { freshInputs } from './replan.js';

const content = { roles: [{ name: 'app', login: false }] };
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
  changeDigestEncoding: 'enc/v1',
  idempotencyKey: 'u/p-1/sha256:approved',
  target: 'ns/db/DATABASE_URL',
  content,
  mode: 'authoritative',
  allowSchemaOwnerTransfers: false,
  requirePhysicalIdentity: false,
  approvedIdentity: { physical: null, logical: 'sha256:l' },
  passwordSources: {},
  appliedPasswordSourceVersions: {},
};

const approved = {
  type: 'Approved',
  status: 'True' as const,
  reason: 'Approved',
  message: 'ok',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};
const denied = { ...approved, type: 'Denied' };

function plan(
  phase: NonNullable<PostgresPolicyPlan['status']>['phase'],
  conditions = [approved],
): PostgresPolicyPlan {
  return {
    metadata: { name: 'p-1', namespace: 'ns' },
    spec: {
      managedDatabaseIdentity: 'sha256:l',
      policyGeneration: 1,
      policyRef: { name: 'p' },
      reconciliationMode: 'authoritative',
    },
    status: {
      phase,
      conditions,
      changeDigest: 'sha256:approved',
      changeDigestEncoding: 'enc/v1',
      targetPhysicalIdentity: null,
      targetLogicalFingerprint: 'sha256:l',
    },
  };
}

function policy(spec: Partial<PostgresPolicy['spec']> = {}, uid = 'u'): PostgresPolicy {
  return {
    metadata: { name: 'p', namespace: 'ns', uid, generation: 1 },
    spec: { connection: { secretRef: { name: 'db' } }, mode: 'apply', ...content, ...spec },
  };
}

const now: Recheck = {
  changeDigest: 'sha256:approved',
  changeDigestEncoding: 'enc/v1',
  changeCount: 2,
  observed: { physical: null, logical: 'sha256:l' },
};

const verdict = (fresh: FreshState, recheck: Recheck = now) => freshVerdict(request, fresh, recheck);

describe('freshVerdict', () => {
  it('proceeds for an approved plan of a live policy whose digest still matches', () => {
    expect(verdict({ policy: policy(), plan: plan('Approved') })).toEqual({ kind: 'proceed' });
  });

  it('a plan denied after the request is skipped (NotApproved)', () => {
    expect(verdict({ policy: policy(), plan: plan('Pending', [denied]) })).toMatchObject({
      kind: 'skip',
      reason: 'NotApproved',
    });
  });

  it('a policy suspended after the request is skipped', () => {
    expect(verdict({ policy: policy({ suspend: true }), plan: plan('Approved') })).toMatchObject({
      kind: 'skip',
      reason: 'Suspended',
    });
  });

  it('a policy switched to observe mode is skipped', () => {
    expect(verdict({ policy: policy({ mode: 'observe' }), plan: plan('Approved') })).toMatchObject({
      kind: 'skip',
      reason: 'ObserveMode',
    });
  });

  it('a superseded or rejected plan is terminal and skipped', () => {
    expect(verdict({ policy: policy(), plan: plan('Superseded') })).toMatchObject({
      kind: 'skip',
      reason: 'AlreadyTerminal',
    });
    expect(verdict({ policy: policy(), plan: plan('Rejected', [denied]) })).toMatchObject({
      kind: 'skip',
      reason: 'AlreadyTerminal',
    });
  });

  it('a deleted or recreated policy, or a deleted plan, is skipped', () => {
    expect(verdict({ policy: undefined, plan: plan('Approved') })).toMatchObject({ reason: 'PolicyGone' });
    expect(verdict({ policy: policy({}, 'other'), plan: plan('Approved') })).toMatchObject({
      reason: 'PolicyRecreated',
    });
    expect(verdict({ policy: policy(), plan: undefined })).toMatchObject({ reason: 'PlanGone' });
  });

  it('a plan left Applying by an earlier attempt is judged as Approved (the lock says no one else runs it)', () => {
    expect(verdict({ policy: policy(), plan: plan('Applying') })).toEqual({ kind: 'proceed' });
  });

  it('a recomputed digest that differs from the plan is superseded', () => {
    expect(
      verdict({ policy: policy(), plan: plan('Approved') }, { ...now, changeDigest: 'sha256:x' }),
    ).toMatchObject({
      kind: 'superseded',
    });
  });

  it('an empty re-plan is left to decideExecution (convergence), not reported as a digest mismatch', () => {
    expect(
      verdict(
        { policy: policy(), plan: plan('Applying') },
        { ...now, changeCount: 0, changeDigest: 'sha256:empty' },
      ),
    ).toEqual({ kind: 'proceed' });
  });

  it('fails closed when the policy now requires a physical identity the plan lacks', () => {
    const strict = policy({ connection: { secretRef: { name: 'db' }, requirePhysicalIdentity: true } });
    expect(verdict({ policy: strict, plan: plan('Approved') })).toMatchObject({ kind: 'fail_closed' });
  });
});

describe('freshInputs', () => {
  it("keeps the request's inputs while the policy content is unchanged", () => {
    expect(freshInputs(request, policy().spec)).toEqual({
      content,
      mode: 'authoritative',
      allowSchemaOwnerTransfers: false,
    });
  });

  it("plans from the fresh spec's content fields once the content was edited", () => {
    const edited = policy({ roles: [{ name: 'other', login: false }], reconciliation_mode: 'additive' }).spec;
    expect(freshInputs(request, edited)).toEqual({
      content: { roles: [{ name: 'other', login: false }], reconciliation_mode: 'additive' },
      mode: 'additive',
      allowSchemaOwnerTransfers: false,
    });
  });
});
