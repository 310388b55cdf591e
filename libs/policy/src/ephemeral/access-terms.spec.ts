import fc from 'fast-check';
import {
  checkAccessTerms,
  type AccessTermsInput,
  type TermsAccessPolicy,
  type TermsRequest,
} from './access-terms.js';
import { canonicalBundle, type BundleMembership } from './bundle.js';

const policy = (over: Partial<TermsAccessPolicy['spec']> = {}, meta = {}): TermsAccessPolicy => ({
  metadata: { name: 'temporary-write', namespace: 'team-a', uid: 'eap-uid', generation: 3, ...meta },
  spec: {
    memberships: [
      { role: 'reader', inherit: true },
      { role: 'writer', inherit: false },
    ],
    maximumDuration: '1h',
    postgresPolicyRef: { name: 'base' },
    ...over,
  },
});

const request = (
  memberships: BundleMembership[] = [{ role: 'writer', member: 'alice', inherit: false }],
  over: Partial<TermsRequest['resolved']> = {},
): TermsRequest => ({
  metadata: { name: 'alice-write', namespace: 'team-a' },
  spec: { accessPolicyRef: { name: 'temporary-write' }, subject: { role: 'alice' } },
  resolved: {
    accessPolicyUid: 'eap-uid',
    accessPolicyGeneration: 3,
    grantedDuration: '3600s',
    memberships: canonicalBundle(memberships),
    ...over,
  },
});

const input = (over: Partial<AccessTermsInput> = {}): AccessTermsInput => ({
  namespace: 'team-a',
  namespaces: { request: 'team-a', policy: 'team-a' },
  request: request(),
  accessPolicy: policy(),
  targetPolicy: 'base',
  ...over,
});

describe('checkAccessTerms: an Activate is checked against the EphemeralAccessPolicy its request names', () => {
  it('accepts a snapshot the policy allows now, also after an edit that kept it allowed (suspend and resume)', () => {
    expect(checkAccessTerms(input())).toEqual({ ok: true });
    expect(checkAccessTerms(input({ accessPolicy: policy({}, { generation: 5 }) }))).toEqual({ ok: true });
    expect(
      checkAccessTerms(
        input({
          request: request([
            { role: 'reader', member: 'alice', inherit: true },
            { role: 'writer', member: 'alice', inherit: false },
          ]),
        }),
      ),
    ).toEqual({ ok: true });
  });

  it.each<[string, Partial<AccessTermsInput>, string, string]>([
    [
      'the request lives in another namespace than the plan',
      { namespaces: { request: 'team-b', policy: 'team-a' } },
      'NamespaceMismatch',
      'the request is in namespace team-b, not team-a',
    ],
    [
      'the target policy lives in another namespace',
      { namespaces: { request: 'team-a', policy: 'team-b' } },
      'NamespaceMismatch',
      'the policy is in namespace team-b',
    ],
    [
      'the access policy does not exist',
      { accessPolicy: undefined },
      'AccessPolicyGone',
      'EphemeralAccessPolicy team-a/temporary-write, which the request names, does not exist',
    ],
    [
      'another access policy was read',
      { accessPolicy: policy({}, { name: 'other' }) },
      'AccessPolicyGone',
      'does not exist',
    ],
    [
      'the access policy was recreated (uid)',
      { accessPolicy: policy({}, { uid: 'new-uid' }) },
      'AccessPolicyChanged',
      'has uid new-uid, not eap-uid recorded in resolvedAccess',
    ],
    [
      'resolvedAccess records a generation the access policy never reached',
      { accessPolicy: policy({}, { generation: 2 }) },
      'AccessPolicyChanged',
      'is at generation 2, below generation 3 recorded in resolvedAccess',
    ],
    [
      'the access policy is suspended',
      { accessPolicy: policy({ suspend: true }) },
      'AccessPolicySuspended',
      'is suspended (spec.suspend)',
    ],
    [
      'the access policy targets another PostgresPolicy',
      { targetPolicy: 'other-db' },
      'TargetMismatch',
      'targets PostgresPolicy base, not other-db',
    ],
    [
      'a membership goes to someone else than the subject',
      { request: request([{ role: 'writer', member: 'bob', inherit: false }]) },
      'SubjectMismatch',
      "grants role writer to bob, not to the request's subject alice",
    ],
    [
      'a membership the policy does not list',
      { request: request([{ role: 'admin', member: 'alice', inherit: true }]) },
      'MembershipNotInAccessPolicy',
      'grants role admin, which EphemeralAccessPolicy team-a/temporary-write does not list in spec.memberships',
    ],
    [
      'a listed membership with another inherit',
      { request: request([{ role: 'writer', member: 'alice', inherit: true }]) },
      'MembershipNotInAccessPolicy',
      'grants role writer with inherit true, but EphemeralAccessPolicy team-a/temporary-write lists it with inherit false',
    ],
    [
      'a granted duration longer than maximumDuration',
      { request: request(undefined, { grantedDuration: '3601s' }) },
      'DurationExceedsMaximum',
      'resolvedAccess.grantedDuration 3601s is not within spec.maximumDuration 1h',
    ],
    [
      'a granted duration that does not parse',
      { request: request(undefined, { grantedDuration: 'forever' }) },
      'DurationExceedsMaximum',
      'grantedDuration forever is not within',
    ],
  ])('refuses when %s', (_name, over, reason, message) => {
    const verdict = checkAccessTerms(input(over));
    expect(verdict).toMatchObject({ ok: false, reason });
    expect(verdict.ok === false && verdict.message).toContain(message);
  });

  it('property: accepted exactly when every membership is listed with its inherit and goes to the subject', () => {
    const roles = ['a', 'b', 'c', 'd'];
    const entry = fc.record({
      role: fc.constantFrom(...roles),
      member: fc.constantFrom('alice', 'bob'),
      inherit: fc.boolean(),
    });
    const listed = fc.uniqueArray(fc.record({ role: fc.constantFrom(...roles), inherit: fc.boolean() }), {
      selector: (m) => m.role,
      minLength: 1,
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(entry, { selector: (m) => m.role, maxLength: 4 }),
        listed,
        (bundle, memberships) => {
          const verdict = checkAccessTerms(
            input({ request: request(bundle), accessPolicy: policy({ memberships }) }),
          );
          const allowed = bundle.every(
            (m) =>
              m.member === 'alice' && memberships.some((l) => l.role === m.role && l.inherit === m.inherit),
          );
          expect(verdict.ok).toBe(allowed);
        },
      ),
    );
  });
});
