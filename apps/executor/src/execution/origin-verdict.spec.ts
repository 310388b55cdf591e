// A candidate never executes SQL: the executor refuses a plan made for a candidate unless its own policy now
// carries exactly the candidate's content (promotion), whatever the plan's decision says.
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import { CONTENT_DIGEST_ENCODING, contentDigest } from '@rolepolicy/policy';
import type { PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import { freshVerdict, presenceVerdict, type Recheck } from './fresh-verdict.js';

const proposed = { roles: [{ name: 'app', login: true }] };
const original = { roles: [{ name: 'app', login: false }] };

const request = {
  v: 2,
  plan: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicyPlan', namespace: 'ns', name: 'c-1' },
  policy: {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicy',
    namespace: 'ns',
    name: 'p',
    uid: 'u',
  },
  changeDigest: 'sha256:approved',
  changeDigestEncoding: 'enc/v1',
} as unknown as ExecuteRequestV2;

function policy(content: object, uid = 'u'): PostgresPolicy {
  return {
    metadata: { name: 'p', namespace: 'ns', uid, generation: 2 },
    spec: { connection: { secretRef: { name: 'db' } }, mode: 'apply', approval: 'manual', ...content },
  };
}

function candidatePlan(
  origin: Partial<NonNullable<PostgresPolicyPlan['spec']['origin']>> = {},
): PostgresPolicyPlan {
  return {
    metadata: { name: 'c-1', namespace: 'ns' },
    spec: {
      managedDatabaseIdentity: 'ns/db',
      policyGeneration: 1,
      policyRef: { name: 'p' },
      reconciliationMode: 'authoritative',
      origin: {
        kind: 'PostgresPolicyCandidate',
        name: 'c',
        uid: 'cu',
        contentDigest: contentDigest(proposed).digest,
        contentDigestEncoding: CONTENT_DIGEST_ENCODING,
        baseContentDigest: contentDigest(original).digest,
        policyUid: 'u',
        ...origin,
      },
    },
    status: {
      phase: 'Approved',
      conditions: [{ type: 'Approved', status: 'True', reason: 'Approved', message: 'ok' }],
      changeDigest: 'sha256:approved',
      changeDigestEncoding: 'enc/v1',
      targetPhysicalIdentity: null,
      targetLogicalFingerprint: 'sha256:l',
    },
  };
}

const recheck: Recheck = {
  changeDigest: 'sha256:approved',
  changeDigestEncoding: 'enc/v1',
  changeCount: 1,
  observed: { physical: null, logical: 'sha256:l' },
};

describe('candidate plans at the executor', () => {
  it('an approved candidate plan is refused while the policy still carries other content', () => {
    const verdict = freshVerdict(request, { policy: policy(original), plan: candidatePlan() }, recheck);
    expect(verdict).toMatchObject({ kind: 'skip', reason: 'CandidateNotPromoted' });
    expect((verdict as { message: string }).message).toContain('a candidate never executes');
  });

  it('runs only once the policy carries exactly the candidate content (promoted as the policy plan)', () => {
    expect(freshVerdict(request, { policy: policy(proposed), plan: candidatePlan() }, recheck)).toEqual({
      kind: 'proceed',
    });
  });

  it('is refused for another policy uid, another encoding, or a plan naming another policy', () => {
    expect(
      presenceVerdict(request, { policy: policy(proposed, 'u'), plan: candidatePlan({ policyUid: 'x' }) }),
    ).toMatchObject({ reason: 'CandidateNotPromoted' });
    expect(
      presenceVerdict(request, {
        policy: policy(proposed),
        plan: candidatePlan({ contentDigestEncoding: 'rolepolicy.io/policy-content/v1' }),
      }),
    ).toMatchObject({ reason: 'CandidateNotPromoted' });
    const other = candidatePlan();
    const renamed = { ...other, spec: { ...other.spec, policyRef: { name: 'q' } } };
    expect(presenceVerdict(request, { policy: policy(proposed), plan: renamed })).toMatchObject({
      reason: 'CandidateNotPromoted',
    });
  });

  it('a target preview plan, even merged and approved, fails the identity check on the parent database', () => {
    const plan = candidatePlan();
    const preview = { ...plan, status: { ...plan.status, targetLogicalFingerprint: 'sha256:preview-db' } };
    expect(freshVerdict(request, { policy: policy(proposed), plan: preview }, recheck)).toMatchObject({
      kind: 'superseded',
      reason: 'TargetChanged',
    });
  });

  it('durable policy plans (no origin) are not affected', () => {
    const plan = candidatePlan();
    const durable = { ...plan, spec: { ...plan.spec, origin: null } };
    expect(presenceVerdict(request, { policy: policy(original), plan: durable })).toEqual({
      kind: 'proceed',
    });
  });
});
