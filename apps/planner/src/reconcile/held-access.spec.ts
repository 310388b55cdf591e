// The planner's overlay adapter over a cache-like reader: anchored requests join the desired memberships,
// forged or unrelated ones do not, conflicts become the EphemeralAccessConflict failure message.
import type { CachedObject } from '@rolepolicy/contracts';
import {
  BUNDLE_ENCODING,
  bundleHash,
  expandPolicy,
  scopedPlanName,
  type DesiredState,
} from '@rolepolicy/policy';
import { EphemeralTriggers } from './ephemeral-triggers.js';
import { policyHeldAccess, type HeldAccessReader } from '@rolepolicy/plan-lifecycle';

const NS = 'team-a';
const FP = 'sha256:fp';
const POLICY = { namespace: NS, uid: 'policy-uid' };

function desired(): DesiredState {
  const expansion = expandPolicy(
    {
      roles: [{ name: 'alice', login: true }, { name: 'reader' }, { name: 'writer' }],
      memberships: [{ role: 'reader', members: [{ name: 'alice' }] }],
    } as never,
    { policyName: 'orders' },
  );
  if (!expansion.ok) throw new Error(JSON.stringify(expansion.errors));
  return expansion.desired;
}

function request(name: string, phase: string, roles: string[], policyUid = POLICY.uid) {
  const memberships = roles
    .map((role) => ({ role, member: 'alice', inherit: true }))
    .sort((a, b) => (a.role < b.role ? -1 : 1));
  const hash = bundleHash({ targetDatabaseFingerprint: FP, memberships });
  const uid = `${name}-uid`;
  const object = {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: { name, namespace: NS, uid },
    spec: { subject: { role: 'alice' } },
    status: {
      phase,
      resolvedAccess: {
        bundleEncoding: BUNDLE_ENCODING,
        bundleHash: hash,
        targetDatabaseFingerprint: FP,
        memberships,
        targetPolicyUid: policyUid,
        targetPolicyGeneration: 1,
        accessPolicyUid: 'ap',
        accessPolicyGeneration: 1,
        grantedDuration: '60s',
      },
    },
  } as unknown as CachedObject;
  const plan = {
    metadata: { name: scopedPlanName({ name, uid }, 'Activate', hash), namespace: NS },
    spec: {
      policyRef: { name: 'orders' },
      origin: { kind: 'EphemeralAccessRequest', name, uid },
      scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: hash },
    },
    status: { phase: 'Applied' },
  } as unknown as CachedObject;
  return { object, plan };
}

function reader(objects: { requests: CachedObject[]; plans: CachedObject[] }): HeldAccessReader {
  // A fake of the typed cache: these fixtures are partial objects, so the reader is cast once here.
  return {
    // The cache's index of requests by the policy they resolved to (libs/contracts indexed-fields.ts).
    withFields: (kind: string, ns: string, { targetPolicyUid: uid }: { targetPolicyUid?: string }) =>
      kind === 'ephemeralaccessrequest' && uid !== undefined
        ? objects.requests.filter(
            (r) =>
              r.metadata.namespace === ns &&
              (r.status as { resolvedAccess?: { targetPolicyUid?: string } }).resolvedAccess
                ?.targetPolicyUid === uid,
          )
        : [],
    get: (kind: string, _ns: string, name: string) =>
      kind === 'postgrespolicyplan' ? objects.plans.find((p) => p.metadata.name === name) : undefined,
  } as unknown as HeldAccessReader;
}

describe('policyHeldAccess', () => {
  it('adds the memberships of anchored requests to the desired state', () => {
    const a = request('a', 'Active', ['writer']);
    const overlay = policyHeldAccess(
      reader({ requests: [a.object], plans: [a.plan] }),
      POLICY,
      desired(),
      FP,
    );
    expect(overlay.ok).toBe(true);
    if (!overlay.ok) return;
    expect(overlay.edges).toEqual([{ role: 'writer', member: 'alice', inherit: true, admin: false }]);
    expect(overlay.desired.memberships.map((m) => `${m.role}/${m.member}`)).toEqual([
      'reader/alice',
      'writer/alice',
    ]);
  });

  it('with the live memberships, keeps only held edges the database has: the base policy never grants one', () => {
    const a = request('a', 'Applying', ['writer']);
    const sources = reader({ requests: [a.object], plans: [a.plan] });
    const before = policyHeldAccess(sources, POLICY, desired(), FP, [{ role: 'reader', member: 'alice' }]);
    expect(before).toEqual({ ok: true, desired: desired(), edges: [] });
    const after = policyHeldAccess(sources, POLICY, desired(), FP, [
      { role: 'reader', member: 'alice' },
      { role: 'writer', member: 'alice' },
    ]);
    expect(after.ok && after.desired.memberships.map((m) => `${m.role}/${m.member}`)).toEqual([
      'reader/alice',
      'writer/alice',
    ]);
  });

  it('a forged request (no activation plan), one whose revocation failed and one for another policy add nothing', () => {
    const forged = request('forged', 'Active', ['writer']);
    const failed = request('failed', 'Revoking', ['writer']);
    const failedObject = {
      ...failed.object,
      status: { ...(failed.object as { status: object }).status, lastError: 'Blocked: database unreachable' },
    } as unknown as CachedObject;
    const other = request('other', 'Active', ['writer'], 'another-policy');
    const base = desired();
    const overlay = policyHeldAccess(
      reader({
        requests: [forged.object, failedObject, other.object],
        plans: [failed.plan, other.plan],
      }),
      POLICY,
      base,
      FP,
      [{ role: 'writer', member: 'alice' }],
    );
    // The base pass removes a failed revocation's edge itself (the backstop).
    expect(overlay).toEqual({ ok: true, desired: base, edges: [] });
  });

  it("leaves a Revoking request's live edge to its own revocation, and grants nothing once it is gone", () => {
    const revoking = request('revoking', 'Revoking', ['writer']);
    const sources = reader({ requests: [revoking.object], plans: [revoking.plan] });
    const live = policyHeldAccess(sources, POLICY, desired(), FP, [{ role: 'writer', member: 'alice' }]);
    expect(live.ok && live.edges.map((e) => `${e.role}/${e.member}`)).toEqual(['writer/alice']);
    const gone = policyHeldAccess(sources, POLICY, desired(), FP, []);
    expect(gone).toEqual({ ok: true, desired: desired(), edges: [] });
  });

  it('a changed fingerprint, or an unknown one, blocks with a message naming the request and its uid', () => {
    const a = request('a', 'Active', ['writer']);
    for (const fp of ['sha256:moved', null]) {
      const overlay = policyHeldAccess(
        reader({ requests: [a.object], plans: [a.plan] }),
        POLICY,
        desired(),
        fp,
      );
      expect(overlay.ok).toBe(false);
      if (!overlay.ok) expect(overlay.message).toContain('request a (uid a-uid)');
    }
  });

  it('a bundle role the policy no longer declares blocks the reconcile', () => {
    const a = request('a', 'Active', ['auditor']);
    const overlay = policyHeldAccess(
      reader({ requests: [a.object], plans: [a.plan] }),
      POLICY,
      desired(),
      FP,
    );
    expect(overlay.ok).toBe(false);
    if (!overlay.ok) expect(overlay.message).toMatch(/no longer declares role auditor/);
  });
});

describe('EphemeralTriggers', () => {
  const orders = { metadata: { name: 'orders', namespace: NS, uid: POLICY.uid } } as unknown as CachedObject;
  const policies = (namespace: string, uid: string) =>
    namespace === NS && uid === POLICY.uid ? orders : undefined;
  const change = (kind: string, object: CachedObject | undefined, type: 'upsert' | 'delete' = 'upsert') => ({
    type,
    kind,
    namespace: NS,
    name: object?.metadata.name ?? 'gone',
    ...(object ? { object } : {}),
  });

  it('a request phase change wakes its target policy once; a repeat does not', () => {
    const triggers = new EphemeralTriggers();
    const a = request('a', 'Active', ['writer']);
    expect(triggers.wake(change('ephemeralaccessrequest', a.object), policies)).toBe(`${NS}/orders`);
    expect(triggers.wake(change('ephemeralaccessrequest', a.object), policies)).toBeUndefined();
    const ended = request('a', 'Ended', ['writer']);
    expect(triggers.wake(change('ephemeralaccessrequest', ended.object), policies)).toBe(`${NS}/orders`);
    expect(
      triggers.wake({ type: 'delete', kind: 'ephemeralaccessrequest', namespace: NS, name: 'a' }, policies),
    ).toBe(`${NS}/orders`);
  });

  it('a scoped plan phase change wakes the policy it names; durable plans are not its business', () => {
    const triggers = new EphemeralTriggers();
    const a = request('a', 'Active', ['writer']);
    expect(triggers.wake(change('postgrespolicyplan', a.plan), policies)).toBe(`${NS}/orders`);
    const durable = {
      metadata: { name: 'orders-abc', namespace: NS },
      spec: { policyRef: { name: 'orders' } },
    };
    expect(
      triggers.wake(change('postgrespolicyplan', durable as unknown as CachedObject), policies),
    ).toBeUndefined();
  });
});
