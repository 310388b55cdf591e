// Spec decision rule 6 and Errors: a plan that had the physical identity and cannot read it at execution
// fails closed; requirePhysicalIdentity refuses execution; execution only when the recomputed digest matches.
import { executionVerdict, identityVerdict, type TargetIdentityReading } from './execution-verdict.js';
import type { PostgresPolicyPlan, PostgresPolicySpec } from './resources.js';
import { ENCODING, digest } from './test-support/fixtures.js';

const SYS = '7412330000000000001';
const OTHER = '7412330000000000002';
const FP = 'sha256:fp';

function read(physical: string | null, logical: string | null = FP): TargetIdentityReading {
  return { physical, logical };
}

describe('identity verdict at execution (spec decision rule 6)', () => {
  it.each([
    // [requirePhysicalIdentity, approved, observed, verdict, reason]
    [false, read(SYS), read(SYS), 'proceed', undefined],
    [false, read(null), read(null), 'proceed', undefined],
    [false, read(SYS), read(OTHER), 'superseded', 'TargetChanged'],
    [false, read(SYS), read(null), 'fail_closed', 'TargetIdentityUnavailable'],
    [false, read(null), read(SYS), 'superseded', 'TargetIdentityAppeared'],
    [false, read(SYS, FP), read(SYS, 'sha256:other'), 'superseded', 'TargetChanged'],
    [false, read(SYS, FP), read(SYS, null), 'fail_closed', 'TargetIdentityUnavailable'],
    [true, read(SYS), read(SYS), 'proceed', undefined],
    [true, read(SYS), read(null), 'fail_closed', 'PhysicalIdentityRequired'],
    [true, read(null), read(SYS), 'fail_closed', 'PhysicalIdentityRequired'],
    [true, read(null), read(null), 'fail_closed', 'PhysicalIdentityRequired'],
  ] as const)(
    'require=%s approved=%j observed=%j -> %s %s',
    (requirePhysicalIdentity, approved, observed, kind, reason) => {
      const verdict = identityVerdict({ requirePhysicalIdentity, approved, observed });
      expect(verdict.kind).toBe(kind);
      if (verdict.kind !== 'proceed') expect(verdict.reason).toBe(reason);
    },
  );

  it('a plan that had the physical identity fails closed when it can no longer be read (never "unknown")', () => {
    const verdict = identityVerdict({
      requirePhysicalIdentity: false,
      approved: read(SYS),
      observed: read(null),
    });
    expect(verdict).toMatchObject({ kind: 'fail_closed', reason: 'TargetIdentityUnavailable' });
  });
});

function approvedPlan(
  overrides: Partial<NonNullable<PostgresPolicyPlan['status']>> = {},
): PostgresPolicyPlan {
  return {
    metadata: { name: 'orders-abc', namespace: 'team-a' },
    spec: {
      managedDatabaseIdentity: 'x',
      policyGeneration: 1,
      policyRef: { name: 'orders' },
      reconciliationMode: 'authoritative',
    },
    status: {
      phase: 'Approved',
      conditions: [{ type: 'Approved', status: 'True', reason: 'Reviewed' }],
      decidedBy: { username: 'alice' },
      changeDigest: digest('A'),
      changeDigestEncoding: ENCODING,
      targetPhysicalIdentity: SYS,
      targetLogicalFingerprint: FP,
      physicalIdentityAvailable: true,
      ...overrides,
    },
  };
}

describe('execution verdict: execution proceeds only when the recomputed changeDigest equals the approved one', () => {
  const spec: PostgresPolicySpec = {
    connection: { secretRef: { name: 'db' } },
    mode: 'apply',
    approval: 'manual',
  };
  const base = { policySpec: spec, ownerTransferBlocked: false, observed: read(SYS) };

  it('executes an approved plan whose digest and encoding match', () => {
    const verdict = executionVerdict({
      ...base,
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toEqual({ kind: 'execute' });
  });

  it('supersedes instead of executing when the recomputed digest differs', () => {
    const verdict = executionVerdict({
      ...base,
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('B'), changeDigestEncoding: ENCODING },
    });
    expect(verdict.kind).toBe('superseded');
  });

  it('digests under different encodings are never comparable', () => {
    const verdict = executionVerdict({
      ...base,
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: 'rolepolicy.io/approval-effect/v2' },
    });
    expect(verdict.kind).toBe('superseded');
  });

  it('Denied wins over Approved (fail closed)', () => {
    const plan = approvedPlan({
      conditions: [
        { type: 'Approved', status: 'True' },
        { type: 'Denied', status: 'True' },
      ],
    });
    const verdict = executionVerdict({
      ...base,
      plan,
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toMatchObject({ kind: 'skip', reason: 'NotApproved' });
  });

  it.each(['Superseded', 'Rejected', 'Applied', 'Failed'] as const)(
    'never executes a %s plan even if it carries Approved=True',
    (phase) => {
      const verdict = executionVerdict({
        ...base,
        plan: approvedPlan({ phase }),
        recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
      });
      expect(verdict).toMatchObject({ kind: 'skip', reason: 'AlreadyTerminal' });
    },
  );

  it('does not start a second execution of an Applying plan', () => {
    const verdict = executionVerdict({
      ...base,
      plan: approvedPlan({ phase: 'Applying' }),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toMatchObject({ kind: 'skip', reason: 'InProgress' });
  });

  it('fails closed on identity before comparing digests', () => {
    const verdict = executionVerdict({
      ...base,
      observed: read(null),
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toMatchObject({ kind: 'fail_closed', reason: 'TargetIdentityUnavailable' });
  });

  it('requirePhysicalIdentity set and the identifier unreadable now: execution refused', () => {
    const policySpec = { ...spec, connection: { secretRef: { name: 'db' }, requirePhysicalIdentity: true } };
    const verdict = executionVerdict({
      ...base,
      policySpec,
      observed: read(null),
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toMatchObject({ kind: 'fail_closed', reason: 'PhysicalIdentityRequired' });
  });

  it.each([
    ['a suspended policy', { suspend: true }, 'Suspended'],
    ['a policy switched to observe mode', { mode: 'observe' as const }, 'ObserveMode'],
  ])('does not execute a queued request for %s', (_label, change, reason) => {
    const verdict = executionVerdict({
      ...base,
      policySpec: { ...spec, ...change },
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toMatchObject({ kind: 'skip', reason });
  });

  it('does not execute an adopt-mode owner transfer while allow_schema_owner_transfers is false', () => {
    const verdict = executionVerdict({
      ...base,
      ownerTransferBlocked: true,
      plan: approvedPlan(),
      recomputed: { changeDigest: digest('A'), changeDigestEncoding: ENCODING },
    });
    expect(verdict).toMatchObject({ kind: 'skip', reason: 'OwnerTransferBlocked' });
  });
});
