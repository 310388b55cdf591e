// The executor's re-plan composes the same overlay as the planner; without a cluster view it trusts the request.
import type { CachedObject } from '@rolepolicy/contracts';
import { BUNDLE_ENCODING, bundleHash, scopedPlanName } from '@rolepolicy/policy';
import type { HeldAccessReader } from '@rolepolicy/plan-lifecycle';
import { expandRequest } from './replan.js';
import { withPolicyHeldAccess } from './replan-held-access.js';

const NS = 'team-a';
const FP = 'sha256:fp';
const content = {
  roles: [{ name: 'alice', login: true }, { name: 'writer' }],
};
const expanded = (() => {
  const e = expandRequest({ policy: { name: 'orders' } } as never, {
    content,
    mode: 'authoritative',
    allowSchemaOwnerTransfers: false,
  });
  if (!e.ok) throw new Error(e.message);
  return e;
})();

function reader(): HeldAccessReader {
  const memberships = [{ role: 'writer', member: 'alice', inherit: true }];
  const hash = bundleHash({ targetDatabaseFingerprint: FP, memberships });
  const request = {
    metadata: { name: 'r1', namespace: NS, uid: 'r1-uid' },
    spec: { subject: { role: 'alice' } },
    status: {
      phase: 'Active',
      resolvedAccess: {
        bundleEncoding: BUNDLE_ENCODING,
        bundleHash: hash,
        targetDatabaseFingerprint: FP,
        memberships,
        targetPolicyUid: 'p-uid',
      },
    },
  } as unknown as CachedObject;
  const plan = {
    metadata: { name: scopedPlanName({ name: 'r1', uid: 'r1-uid' }, 'Activate', hash), namespace: NS },
    spec: {
      origin: { kind: 'EphemeralAccessRequest', uid: 'r1-uid' },
      scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: hash },
    },
    status: { phase: 'Applied' },
  } as unknown as CachedObject;
  // A fake of the typed cache over partial fixtures, cast once here.
  return {
    withFields: (kind: string, _ns: string, wanted: { targetPolicyUid?: string }) =>
      kind === 'ephemeralaccessrequest' && wanted.targetPolicyUid === 'p-uid' ? [request] : [],
    get: (kind: string, _ns: string, name: string) =>
      kind === 'postgrespolicyplan' && name === plan.metadata.name ? plan : undefined,
  } as unknown as HeldAccessReader;
}

describe('withPolicyHeldAccess', () => {
  it('adds the memberships anchored requests hold, as the planner does', () => {
    const overlaid = withPolicyHeldAccess(reader(), { namespace: NS, uid: 'p-uid' }, expanded, FP);
    expect(overlaid.ok && overlaid.expanded.desired.memberships).toEqual([
      { role: 'writer', member: 'alice', inherit: true, admin: false },
    ]);
    // The managed scope (part of the digest) does not change: overlay roles are the policy's own.
    expect(overlaid.ok && overlaid.expanded.scope).toBe(expanded.scope);
  });

  it('without a cluster view or a policy uid the request is trusted as is', () => {
    expect(withPolicyHeldAccess(null, { namespace: NS, uid: 'p-uid' }, expanded, FP)).toEqual({
      ok: true,
      expanded,
    });
    expect(withPolicyHeldAccess(reader(), { namespace: NS, uid: undefined }, expanded, FP)).toEqual({
      ok: true,
      expanded,
    });
  });

  it('a conflict found under the lock supersedes the plan without SQL', () => {
    const overlaid = withPolicyHeldAccess(
      reader(),
      { namespace: NS, uid: 'p-uid' },
      expanded,
      'sha256:moved',
    );
    expect(overlaid.ok).toBe(false);
    if (!overlaid.ok) {
      expect(overlaid.facts).toMatchObject({ phase: 'Superseded', reason: 'EphemeralAccessConflict' });
      expect(overlaid.facts.message).toContain('request r1 (uid r1-uid)');
    }
  });
});
