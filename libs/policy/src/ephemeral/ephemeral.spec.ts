// The ephemeral access primitives: durations, the bundle hash an approval binds to (pinned bytes), plan names
// and the provenance anchor that keeps a forged request status from granting anything.
import fc from 'fast-check';
import { sha256Digest } from '../digest/sha256.js';
import {
  activationPlanName,
  BUNDLE_ENCODING,
  bundleHash,
  canonicalBundle,
  canonicalDuration,
  hasActivationAnchor,
  parseEphemeralDuration,
  scopedPlanName,
  verifyResolvedAccess,
  type AnchorPlan,
  type AnchorRequest,
  type BundleMembership,
} from './index.js';

const FINGERPRINT = 'sha256:' + 'ab'.repeat(32);
const MEMBERSHIPS: BundleMembership[] = [
  { role: 'readonly', member: 'alice', inherit: true },
  { role: 'analyst', member: 'alice', inherit: false },
];

describe('parseEphemeralDuration', () => {
  it.each([
    ['30s', 30],
    ['15m', 900],
    ['1h30m', 5400],
    ['1h1h', 7200],
    ['0h5m', 300],
  ])('%s is %i seconds', (text, seconds) => {
    expect(parseEphemeralDuration(text)).toEqual({ ok: true, seconds });
  });

  it.each(['', '1d', '1.5h', '-1h', '1 h', 'h', '1H'])('%j does not match the pattern', (text) => {
    expect(parseEphemeralDuration(text)).toEqual({
      ok: false,
      message: 'must match ^([0-9]+[smh])+$ (for example 30m, 1h or 1h30m)',
    });
  });

  it('refuses zero and overflow', () => {
    expect(parseEphemeralDuration('0s0m')).toEqual({ ok: false, message: 'must be greater than zero' });
    expect(parseEphemeralDuration('99999999999999999999h')).toMatchObject({ ok: false });
    expect(parseEphemeralDuration('876001h')).toMatchObject({ ok: false });
  });

  it('canonical form round-trips through the parser', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (seconds) => {
        expect(parseEphemeralDuration(canonicalDuration(seconds))).toEqual({ ok: true, seconds });
      }),
    );
  });
});

describe('bundleHash', () => {
  it('pins its bytes (change BUNDLE_ENCODING, never this fixture, when they change)', () => {
    expect(BUNDLE_ENCODING).toBe('rolepolicy.io/ephemeral-membership-bundle/v1');
    // The hashed bytes, written by hand; the digest is `printf '%s' <bytes> | sha256sum`.
    const bytes =
      '{"bundleEncoding":"rolepolicy.io/ephemeral-membership-bundle/v1",' +
      '"membershipSemantics":"postgres-membership-v1-admin-false-set-server-default",' +
      '"memberships":[{"inherit":false,"member":"alice","role":"analyst"},' +
      '{"inherit":true,"member":"alice","role":"readonly"}],' +
      `"targetDatabaseFingerprint":"${FINGERPRINT}"}`;
    expect(sha256Digest(bytes)).toBe(
      'sha256:a9447832f79ce509f8b4dc002878d33b1be17e5581cd5df774ddb8d47a8c6fff',
    );
    expect(bundleHash({ targetDatabaseFingerprint: FINGERPRINT, memberships: MEMBERSHIPS })).toBe(
      'sha256:a9447832f79ce509f8b4dc002878d33b1be17e5581cd5df774ddb8d47a8c6fff',
    );
  });

  it('does not depend on declaration order, and changes with every field', () => {
    const base = bundleHash({ targetDatabaseFingerprint: FINGERPRINT, memberships: MEMBERSHIPS });
    expect(
      bundleHash({ targetDatabaseFingerprint: FINGERPRINT, memberships: [...MEMBERSHIPS].reverse() }),
    ).toBe(base);
    const variants = [
      { targetDatabaseFingerprint: 'sha256:' + 'cd'.repeat(32), memberships: MEMBERSHIPS },
      {
        targetDatabaseFingerprint: FINGERPRINT,
        memberships: [{ ...MEMBERSHIPS[0]!, inherit: false }, MEMBERSHIPS[1]!],
      },
      {
        targetDatabaseFingerprint: FINGERPRINT,
        memberships: [{ ...MEMBERSHIPS[0]!, member: 'bob' }, MEMBERSHIPS[1]!],
      },
      { targetDatabaseFingerprint: FINGERPRINT, memberships: [MEMBERSHIPS[0]!] },
    ];
    for (const variant of variants) expect(bundleHash(variant)).not.toBe(base);
  });
});

describe('verifyResolvedAccess', () => {
  const resolved = (memberships = canonicalBundle(MEMBERSHIPS)) => ({
    bundleEncoding: BUNDLE_ENCODING,
    targetDatabaseFingerprint: FINGERPRINT,
    memberships,
    bundleHash: bundleHash({ targetDatabaseFingerprint: FINGERPRINT, memberships }),
  });

  it('accepts what this code wrote', () => {
    expect(verifyResolvedAccess(resolved())).toEqual({ ok: true });
  });

  it('refuses another encoding, a non-canonical order, a repeated role, and an edited payload', () => {
    expect(verifyResolvedAccess({ ...resolved(), bundleEncoding: 'x/v0' })).toMatchObject({ ok: false });
    expect(verifyResolvedAccess(resolved([...canonicalBundle(MEMBERSHIPS)].reverse()))).toEqual({
      ok: false,
      message: 'resolvedAccess.memberships are not in canonical order or repeat an entry',
    });
    const twice = canonicalBundle([...MEMBERSHIPS, { role: 'readonly', member: 'alice', inherit: false }]);
    expect(verifyResolvedAccess(resolved(twice))).toEqual({
      ok: false,
      message: 'resolvedAccess.memberships grant role readonly twice',
    });
    const edited = {
      ...resolved(),
      memberships: [{ role: 'superuser_role', member: 'alice', inherit: true }],
    };
    expect(verifyResolvedAccess(edited)).toEqual({
      ok: false,
      message: 'resolvedAccess.bundleHash does not match its memberships and target',
    });
  });
});

describe('scopedPlanName', () => {
  const hash = 'sha256:0123456789abcdef' + '0'.repeat(48);

  it('is deterministic and readable', () => {
    expect(scopedPlanName({ name: 'alice-ro', uid: '6F1C2D3E-aaaa' }, 'Activate', hash)).toBe(
      'alice-ro-6f1c2d3e-activate-0123456789ab',
    );
    expect(scopedPlanName({ name: 'alice-ro', uid: '6F1C2D3E-aaaa' }, 'Revoke', hash)).toBe(
      'alice-ro-6f1c2d3e-revoke-0123456789ab',
    );
  });

  it('stays a valid name of at most 253 characters for every valid request name', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    const name = fc
      .array(label, { minLength: 1, maxLength: 20 })
      .map((parts) => parts.join('.').slice(0, 253));
    fc.assert(
      fc.property(name, fc.uuid(), fc.constantFrom('Activate' as const, 'Revoke' as const), (n, uid, op) => {
        const planName = scopedPlanName({ name: n.replace(/[-.]+$/, '') || 'a', uid }, op, hash);
        expect(planName.length).toBeLessThanOrEqual(253);
        expect(planName).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      }),
    );
  });
});

describe('hasActivationAnchor', () => {
  const memberships = canonicalBundle(MEMBERSHIPS);
  const hash = bundleHash({ targetDatabaseFingerprint: FINGERPRINT, memberships });
  const request: AnchorRequest = {
    metadata: { name: 'alice-ro', uid: 'req-uid-1' },
    status: {
      phase: 'Active',
      resolvedAccess: {
        bundleEncoding: BUNDLE_ENCODING,
        bundleHash: hash,
        targetDatabaseFingerprint: FINGERPRINT,
        memberships,
        targetPolicyUid: 'policy-uid',
      },
    },
  };
  const plan: AnchorPlan = {
    metadata: { name: activationPlanName(request)! },
    spec: {
      origin: { kind: 'EphemeralAccessRequest', uid: 'req-uid-1' },
      scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: hash },
    },
    status: { phase: 'Applied' },
  };

  it('holds for an anchored request in a holding phase', () => {
    expect(hasActivationAnchor(request, plan, 'policy-uid')).toBe(true);
    for (const phase of ['Applying', 'Revoking']) {
      expect(
        hasActivationAnchor({ ...request, status: { ...request.status, phase } }, plan, 'policy-uid'),
      ).toBe(true);
    }
  });

  it('a forged status without its plan, or with a plan that does not match, grants nothing', () => {
    expect(hasActivationAnchor(request, undefined, 'policy-uid')).toBe(false);
    expect(hasActivationAnchor(request, plan, 'other-policy')).toBe(false);
    const broken: AnchorPlan[] = [
      { ...plan, metadata: { name: 'something-else' } },
      { ...plan, spec: { ...plan.spec, origin: { kind: 'EphemeralAccessRequest', uid: 'other' } } },
      { ...plan, spec: { ...plan.spec, scope: { ...plan.spec.scope!, operation: 'Revoke' } } },
      { ...plan, spec: { ...plan.spec, scope: { ...plan.spec.scope!, bundleHash: 'sha256:00' } } },
      { ...plan, status: { phase: 'Failed' } },
      { ...plan, status: { phase: 'Pending' } },
    ];
    for (const candidate of broken) expect(hasActivationAnchor(request, candidate, 'policy-uid')).toBe(false);
    for (const phase of ['Pending', 'PendingApproval', 'Ended', 'Revoked', 'Denied']) {
      expect(
        hasActivationAnchor({ ...request, status: { ...request.status, phase } }, plan, 'policy-uid'),
      ).toBe(false);
    }
    const edited = {
      ...request,
      status: {
        ...request.status,
        resolvedAccess: {
          ...request.status!.resolvedAccess!,
          memberships: [{ role: 'admin', member: 'alice', inherit: true }],
        },
      },
    };
    expect(hasActivationAnchor(edited, plan, 'policy-uid')).toBe(false);
  });
});
