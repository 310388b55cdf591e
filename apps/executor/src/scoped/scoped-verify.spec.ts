// The checks a scoped execution request must pass before any database work (ADR 0008), one per row.
import { bundleScope, refusalFacts } from './scoped-steps.js';
import { scopedResultFor, scopedResultMessageId } from './scoped-result.js';
import { verifyScoped, type PlanRequest, type ScopedState } from './scoped-verify.js';
import { FP, REQ, memberships, message, plan, ref, request, state } from './test-support/scoped-fixtures.js';

const reasonOf = (m: PlanRequest, s: ScopedState): string => {
  const v = verifyScoped(m, s);
  return v.kind === 'stop' ? v.reason : v.kind;
};

describe('verifyScoped', () => {
  it('an Activate of an anchored request in Applying proceeds with its bundle, subject and fingerprint', () => {
    expect(verifyScoped(message(), state())).toEqual({
      kind: 'proceed',
      memberships,
      subject: 'alice',
      targetDatabaseFingerprint: FP,
    });
  });

  it('a Revoke of a Revoking request whose activation plan was Applied proceeds', () => {
    expect(reasonOf(message('Revoke'), state({}, 'Revoke'))).toBe('proceed');
  });

  it('a Revoke does not wait for its plan (its record): the request checks alone decide', () => {
    expect(reasonOf(message('Revoke'), state({ plan: undefined }, 'Revoke'))).toBe('proceed');
    const withoutStatus = { ...plan('Revoke'), status: undefined };
    expect(reasonOf(message('Revoke'), state({ plan: withoutStatus }, 'Revoke'))).toBe('proceed');
    // Without the activation anchor it holds nothing, plan or not.
    expect(reasonOf(message('Revoke'), state({ plan: undefined, activationPlan: undefined }, 'Revoke'))).toBe(
      'NoActivationAnchor',
    );
    expect(reasonOf(message('Revoke'), state({ plan: undefined, request: undefined }, 'Revoke'))).toBe(
      'RequestGone',
    );
  });

  it.each<[string, Partial<ScopedState>, string]>([
    ['the plan is not visible yet', { plan: undefined }, 'not_visible'],
    ['the plan has no status yet', { plan: { ...plan('Activate'), status: undefined } }, 'not_visible'],
    ['the plan is already Applied', { plan: plan('Activate', 'Applied') }, 'applied'],
    ['the plan Failed', { plan: plan('Activate', 'Failed') }, 'PlanNotApplying'],
    ['the plan is for another operation', { plan: plan('Revoke') }, 'ScopeMismatch'],
    [
      'the plan has another origin',
      {
        plan: {
          ...plan('Activate'),
          spec: { ...plan('Activate').spec, origin: { kind: 'EphemeralAccessRequest', uid: 'x' } },
        },
      },
      'ScopeMismatch',
    ],
    [
      'the plan is controlled by someone else',
      { plan: { ...plan('Activate'), metadata: { ...plan('Activate').metadata, ownerReferences: [] } } },
      'ScopeMismatch',
    ],
    ['the request is gone', { request: undefined }, 'RequestGone'],
    [
      'the request was recreated',
      { request: { ...request(), metadata: { name: REQ.name, uid: 'other' } } },
      'RequestRecreated',
    ],
    [
      'the request has no resolvedAccess',
      { request: { ...request(), status: { phase: 'Applying' } } },
      'NotResolved',
    ],
    [
      'the snapshot was edited (hash no longer matches)',
      {
        request: request('Applying', {
          memberships: [{ role: 'superuser_ops', member: 'alice', inherit: true }],
        }),
      },
      'InvalidResolvedAccess',
    ],
    [
      'the snapshot targets another policy',
      { request: request('Applying', { targetPolicyUid: 'other' }) },
      'PolicyMismatch',
    ],
    ['the policy is gone', { policy: undefined }, 'PolicyGone'],
    ['the policy was recreated', { policy: { metadata: { uid: 'new' } } }, 'PolicyRecreated'],
    [
      'the request is Active but has no activation plan (forged)',
      { request: request('Active'), activationPlan: undefined },
      'NoActivationAnchor',
    ],
    ['the request has ended', { request: request('Ended') }, 'NoActivationAnchor'],
    ['an Activate of a Revoking request', { request: request('Revoking') }, 'NotActivating'],
  ])('%s -> %s', (_label, over, expected) => {
    expect(reasonOf(message(), state(over))).toBe(expected);
  });

  it('a Revoke without an activation plan (forged status) is refused: NoActivationAnchor', () => {
    expect(reasonOf(message('Revoke'), state({ activationPlan: undefined }, 'Revoke'))).toBe(
      'NoActivationAnchor',
    );
    expect(reasonOf(message('Revoke'), state({ activationPlan: plan('Activate', 'Failed') }, 'Revoke'))).toBe(
      'NoActivationAnchor',
    );
  });

  it('a message without the request or policy uid is invalid', () => {
    const m = message();
    expect(reasonOf({ ...m, request: ref('EphemeralAccessRequest', REQ.name) }, state())).toBe(
      'InvalidRequest',
    );
  });
});

describe('scoped execution helpers', () => {
  it('inspects exactly the bundle roles and the subject', () => {
    expect(
      bundleScope([{ role: 'writer', member: 'alice', inherit: false }, ...memberships], 'alice').roles,
    ).toEqual(['alice', 'reader', 'writer']);
  });

  it('a refused plan reports the first reason and every message', () => {
    const facts = refusalFacts([
      { reason: 'RoleMissing', membership: memberships[0]!, message: 'a' },
      { reason: 'AlreadyDurable', membership: memberships[0]!, message: 'b' },
    ]);
    expect(facts).toEqual({ outcome: 'Failed', reason: 'RoleMissing', message: 'a; b; nothing was run' });
  });

  it('results are bounded and Blocked ones get a fresh message id per report', () => {
    const statements = Array.from({ length: 70 }, (_, i) => `GRANT "r${i}" TO "alice"`);
    const result = scopedResultFor(
      message(),
      { outcome: 'Applied', reason: 'MembershipsGranted', message: 'x'.repeat(5000), statements },
      new Date(0),
    );
    expect(result.statements).toHaveLength(64);
    expect(result.message).toHaveLength(4096);
    expect(scopedResultMessageId(result)).toBe(`${message().idempotencyKey}/Applied/MembershipsGranted`);
    const blocked = scopedResultFor(
      message(),
      { outcome: 'Blocked', reason: 'TargetFingerprintChanged', message: 'm' },
      new Date(0),
    );
    expect(scopedResultMessageId(blocked)).toContain(blocked.reportedAt);
  });
});
