import { BUNDLE_ENCODING, bundleHash, type BundleMembership } from './bundle.js';
import { anchoredRequests, COMPOSED_PHASES, type HolderRequest } from './holders.js';
import { scopedPlanName } from './naming.js';
import type { AnchorPlan } from './provenance.js';

const FP = 'sha256:fp';
const POLICY_UID = 'policy-uid';

function request(
  name: string,
  phase: string,
  memberships: BundleMembership[] = [{ role: 'reader', member: 'alice', inherit: true }],
  targetPolicyUid = POLICY_UID,
): HolderRequest & { metadata: { name: string; uid: string } } {
  const hash = bundleHash({ targetDatabaseFingerprint: FP, memberships });
  return {
    metadata: { name, uid: `${name}-0000-uid` },
    spec: { subject: { role: 'alice' } },
    status: {
      phase,
      resolvedAccess: {
        bundleEncoding: BUNDLE_ENCODING,
        bundleHash: hash,
        targetDatabaseFingerprint: FP,
        memberships,
        targetPolicyUid,
      },
    },
  };
}

function activationPlan(
  r: ReturnType<typeof request>,
  phase = 'Applying',
  over: Partial<AnchorPlan['spec']> = {},
): AnchorPlan {
  const hash = r.status!.resolvedAccess!.bundleHash;
  return {
    metadata: { name: scopedPlanName(r.metadata, 'Activate', hash) },
    spec: {
      origin: { kind: 'EphemeralAccessRequest', uid: r.metadata.uid },
      scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: hash },
      ...over,
    },
    status: { phase },
  };
}

const holders = (
  requests: ReturnType<typeof request>[],
  plans: AnchorPlan[],
  phases?: readonly string[] | 'held-access',
) =>
  anchoredRequests({
    policyUid: POLICY_UID,
    requests,
    planNamed: (name) => plans.find((p) => p.metadata.name === name),
    ...(phases ? { phases } : {}),
  }).map((h) => h.name);

describe('anchoredRequests (the provenance anchor)', () => {
  it('a request with its activation plan Applying or Applied holds access', () => {
    const a = request('a', 'Active');
    const b = request('b', 'Applying');
    expect(holders([b, a], [activationPlan(a, 'Applied'), activationPlan(b, 'Applying')])).toEqual([
      'a',
      'b',
    ]);
  });

  it('a forged request status without an activation plan holds nothing', () => {
    expect(holders([request('a', 'Active')], [])).toEqual([]);
  });

  it('an activation plan that is not Applying or Applied, or of another request, or for another bundle, anchors nothing', () => {
    const a = request('a', 'Active');
    const other = request('other', 'Active');
    expect(holders([a], [activationPlan(a, 'Failed')])).toEqual([]);
    expect(holders([a], [activationPlan(a, 'Pending')])).toEqual([]);
    expect(
      holders(
        [a],
        [
          activationPlan(a, 'Applied', {
            origin: { kind: 'EphemeralAccessRequest', uid: other.metadata.uid },
          }),
        ],
      ),
    ).toEqual([]);
    expect(
      holders(
        [a],
        [
          activationPlan(a, 'Applied', {
            scope: {
              kind: 'MembershipBundle',
              operation: 'Revoke',
              bundleHash: a.status!.resolvedAccess!.bundleHash,
            },
          }),
        ],
      ),
    ).toEqual([]);
  });

  it('a snapshot that does not verify, or targets another policy, holds nothing', () => {
    const a = request('a', 'Active');
    const tampered = {
      ...a,
      status: {
        ...a.status!,
        resolvedAccess: {
          ...a.status!.resolvedAccess!,
          memberships: [{ role: 'superuser_role', member: 'alice', inherit: true }],
        },
      },
    };
    expect(holders([tampered], [activationPlan(a, 'Applied')])).toEqual([]);
    const elsewhere = request('b', 'Active', undefined, 'another-policy');
    expect(holders([elsewhere], [activationPlan(elsewhere, 'Applied')])).toEqual([]);
  });

  it('a snapshot granting to anyone but the subject of the spec holds nothing', () => {
    const a = request('a', 'Active', [{ role: 'reader', member: 'bob', inherit: true }]);
    expect(holders([a], [activationPlan(a, 'Applied')])).toEqual([]);
    const unnamed = { ...request('b', 'Active'), spec: {} };
    expect(holders([unnamed], [activationPlan(unnamed, 'Applied')])).toEqual([]);
  });

  it('a Revoking request is in the held access while its revocation is under way, not once it failed', () => {
    const revoking = request('r', 'Revoking');
    const failed = {
      ...request('f', 'Revoking'),
      status: { ...request('f', 'Revoking').status, lastError: 'x' },
    };
    const ended = request('e', 'Ended');
    const plans = [revoking, failed, ended].map((r) => activationPlan(r, 'Applied'));
    // As other owners (and for its own revocation) a Revoking request counts whatever its last error.
    expect(holders([revoking, failed, ended], plans)).toEqual(['f', 'r']);
    expect(holders([revoking, failed, ended], plans, 'held-access')).toEqual(['r']);
    // Cleared (the next attempt is under way again, or the phase moved on): composed again.
    const retried = { ...failed, status: { ...failed.status, lastError: null } };
    expect(holders([retried], [activationPlan(retried, 'Applied')], 'held-access')).toEqual(['f']);
    expect(holders([ended], [activationPlan(ended, 'Applied')], COMPOSED_PHASES)).toEqual([]);
  });

  it('carries the verified memberships and fingerprint of each holder', () => {
    const a = request('a', 'Active', [
      { role: 'reader', member: 'alice', inherit: true },
      { role: 'writer', member: 'alice', inherit: false },
    ]);
    expect(
      anchoredRequests({
        policyUid: POLICY_UID,
        requests: [a],
        planNamed: () => activationPlan(a, 'Applied'),
      }),
    ).toEqual([
      {
        name: 'a',
        uid: a.metadata.uid,
        targetDatabaseFingerprint: FP,
        memberships: [
          { role: 'reader', member: 'alice', inherit: true },
          { role: 'writer', member: 'alice', inherit: false },
        ],
      },
    ]);
  });
});
