// anchoredRequests tests the cheap conditions (phase, target uid) before it names and looks up a plan; these
// properties hold it to what the full anchor check over every request answered, and check that it looks up
// no plan for a request that targets another policy.
import fc from 'fast-check';
import { compareCodePoints } from '../canonical-order.js';
import { BUNDLE_ENCODING, bundleHash, type BundleMembership } from './bundle.js';
import { anchoredRequests, COMPOSED_PHASES, type HolderRequest } from './holders.js';
import { scopedPlanName } from './naming.js';
import { activationPlanName, hasActivationAnchor, HOLDING_PHASES, type AnchorPlan } from './provenance.js';

const FP = 'sha256:fp';
const POLICIES = ['policy-a', 'policy-b'];
const PHASES = ['Pending', 'Applying', 'Active', 'Revoking', 'Ended', undefined];

/** The full check over every request, as anchoredRequests read them before it filtered on the target first. */
function oracle(
  policyUid: string,
  requests: readonly HolderRequest[],
  plans: readonly AnchorPlan[],
  phases: readonly string[],
): string[] {
  return requests
    .filter((r) => {
      const resolved = r.status?.resolvedAccess;
      if (resolved == null || r.metadata.uid === undefined || !phases.includes(r.status?.phase ?? ''))
        return false;
      const name = activationPlanName(r);
      const plan = plans.find((p) => p.metadata.name === name);
      const subject = r.spec?.subject?.role;
      return (
        hasActivationAnchor(r, plan, policyUid) &&
        subject !== undefined &&
        resolved.memberships.every((m) => m.member === subject)
      );
    })
    .map((r) => `${r.metadata.name}/${r.metadata.uid}`)
    .sort(compareCodePoints);
}

/** Mostly granting to the spec's subject (alice): a snapshot granting to anyone else holds nothing. */
const membership = fc.record({
  role: fc.constantFrom('reader', 'writer'),
  member: fc.constantFrom('alice', 'alice', 'alice', 'bob'),
  inherit: fc.boolean(),
});

/** Mostly true: the rare case is the one that refuses. */
const mostly = fc.constantFrom(true, true, true, false);

/** A request (sometimes without a snapshot, uid or subject; sometimes with a snapshot that does not verify). */
const requestArb = fc
  .record({
    name: fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5'),
    uid: fc.option(fc.constantFrom('u1', 'u2', 'u3', 'u4'), { nil: undefined, freq: 8 }),
    phase: fc.constantFrom(...PHASES),
    subject: fc.option(fc.constant('alice'), { nil: undefined, freq: 8 }),
    resolved: mostly,
    target: fc.constantFrom(...POLICIES),
    memberships: fc.array(membership, { minLength: 1, maxLength: 2 }),
    verifies: mostly,
    lastError: fc.constantFrom(undefined, undefined, null, '', 'Blocked: database unreachable'),
  })
  .map((r): HolderRequest => {
    const memberships: BundleMembership[] = r.memberships;
    const hash = bundleHash({ targetDatabaseFingerprint: FP, memberships });
    return {
      metadata: { name: r.name, ...(r.uid === undefined ? {} : { uid: r.uid }) },
      spec: r.subject === undefined ? {} : { subject: { role: r.subject } },
      status: {
        ...(r.phase === undefined ? {} : { phase: r.phase }),
        ...(r.lastError === undefined ? {} : { lastError: r.lastError }),
        resolvedAccess: r.resolved
          ? {
              bundleEncoding: BUNDLE_ENCODING,
              bundleHash: r.verifies ? hash : `${hash}0`,
              targetDatabaseFingerprint: FP,
              memberships,
              targetPolicyUid: r.target,
            }
          : null,
      },
    };
  });

/** A plan for a request: its activation plan, or one with a wrong phase, origin or operation. */
function plansFor(
  requests: readonly HolderRequest[],
  picks: readonly { phase: string; origin: string | null; operation: 'Activate' | 'Revoke' }[],
): AnchorPlan[] {
  return requests.flatMap((r, i) => {
    const resolved = r.status?.resolvedAccess;
    const pick = picks[i % Math.max(picks.length, 1)];
    if (resolved == null || r.metadata.uid === undefined || pick === undefined) return [];
    const { bundleHash: hash } = resolved;
    return [
      {
        metadata: { name: scopedPlanName({ name: r.metadata.name, uid: r.metadata.uid }, 'Activate', hash) },
        spec: {
          origin: { kind: 'EphemeralAccessRequest', uid: pick.origin ?? r.metadata.uid },
          scope: { kind: 'MembershipBundle', operation: pick.operation, bundleHash: hash },
        },
        status: { phase: pick.phase },
      },
    ];
  });
}

const pickArb = fc.record({
  phase: fc.constantFrom('Applying', 'Applied', 'Applied', 'Failed', 'Pending'),
  origin: fc.constantFrom(null, null, null, 'u9'),
  operation: fc.constantFrom(
    'Activate' as const,
    'Activate' as const,
    'Activate' as const,
    'Revoke' as const,
  ),
});

describe('anchoredRequests (properties)', () => {
  test('answers what the full anchor check over every request answers', () => {
    fc.assert(
      fc.property(
        fc.array(requestArb, { maxLength: 8 }),
        fc.array(pickArb, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...POLICIES),
        fc.constantFrom(HOLDING_PHASES, COMPOSED_PHASES),
        (requests, picks, policyUid, phases) => {
          const plans = plansFor(requests, picks);
          const looked: string[] = [];
          const found = anchoredRequests({
            policyUid,
            requests,
            planNamed: (name) => {
              looked.push(name);
              return plans.find((p) => p.metadata.name === name);
            },
            phases,
          });
          expect(found.map((h) => `${h.name}/${h.uid}`)).toEqual(oracle(policyUid, requests, plans, phases));
          // Sorted by name, then uid, as documented.
          const keys = found.map((h) => [h.name, h.uid] as const);
          expect(keys).toEqual(
            [...keys].sort((a, b) => compareCodePoints(a[0], b[0]) || compareCodePoints(a[1], b[1])),
          );
          const elsewhere = new Set(
            requests
              .filter((r) => r.status?.resolvedAccess?.targetPolicyUid !== policyUid)
              .map((r) => activationPlanName(r)),
          );
          const ours = new Set(
            requests
              .filter((r) => r.status?.resolvedAccess?.targetPolicyUid === policyUid)
              .map((r) => activationPlanName(r)),
          );
          for (const name of looked) expect(ours.has(name) || !elsewhere.has(name)).toBe(true);
        },
      ),
      // About one run in ten finds a holder: enough runs that the holding cases are tried, not only refusals.
      { numRuns: 300 },
    );
  });

  test('held access: the owners, less the Revoking requests whose revocation failed (a lastError)', () => {
    fc.assert(
      fc.property(
        fc.array(requestArb, { maxLength: 8 }),
        fc.array(pickArb, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...POLICIES),
        (generated, picks, policyUid) => {
          // Names of their own, so a failed request and an unfailed one never share a key; every other one
          // Revoking, so failed revocations among the holders are common, not one run in a hundred.
          const requests = generated.map((r, i) => ({
            ...r,
            metadata: { ...r.metadata, name: `r${i}` },
            status: { ...r.status, ...(i % 2 === 0 ? { phase: 'Revoking' } : {}) },
          }));
          const plans = plansFor(requests, picks);
          const read = (phases: 'held-access' | 'owners') =>
            anchoredRequests({
              policyUid,
              requests,
              planNamed: (name) => plans.find((p) => p.metadata.name === name),
              phases,
            }).map((h) => `${h.name}/${h.uid}`);
          const failed = new Set(
            requests
              .filter((r) => r.status?.phase === 'Revoking' && (r.status.lastError ?? '') !== '')
              .map((r) => `${r.metadata.name}/${r.metadata.uid}`),
          );
          expect(read('held-access')).toEqual(read('owners').filter((key) => !failed.has(key)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
