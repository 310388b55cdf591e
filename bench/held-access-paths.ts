// The read of one policy's holders at the ephemeral bench's shape (1,000 requests in one namespace over 50
// target policies, each Active with its activation plan Applied), as held access, a revoke's other holders
// and the sweep do it per pass (issue 28). today: the cache's index of the requests resolved to the policy;
// reordered: every request of the namespace, the target checked before the plan name; legacy: every request,
// each one's plan name built and looked up first, as before this change (branch held-index).
import type { CachedObject } from '@rolepolicy/contracts';
import {
  activationPlanName,
  anchoredRequests,
  BUNDLE_ENCODING,
  bundleHash,
  COMPOSED_PHASES,
  hasActivationAnchor,
  scopedPlanName,
  type AnchorPlan,
  type HolderRequest,
} from '@rolepolicy/policy';

import { fieldReadersOf } from '../libs/contracts/src/cache/indexed-fields.js';
import { IndexedObjects } from '../libs/contracts/src/cache/indexed-objects.js';

const NS = 'bench';
const FP = 'sha256:fp';

/** The fixture: the namespace's requests as the cache indexes them, and their plans by name. */
function fleet(
  requests: number,
  policies: number,
): { objects: IndexedObjects; plans: Map<string, AnchorPlan> } {
  const objects = new IndexedObjects(fieldReadersOf('ephemeralaccessrequest'));
  const plans = new Map<string, AnchorPlan>();
  for (let i = 0; i < requests; i++) {
    const name = `r${i}`;
    const uid = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const memberships = [{ role: `db${i % policies}_reader`, member: `user${i}`, inherit: true }];
    const hash = bundleHash({ targetDatabaseFingerprint: FP, memberships });
    const request = {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'EphemeralAccessRequest',
      metadata: { namespace: NS, name, uid },
      spec: { accessPolicyRef: { name: `a${i % policies}` }, subject: { role: `user${i}` } },
      status: {
        phase: 'Active',
        resolvedAccess: {
          bundleEncoding: BUNDLE_ENCODING,
          bundleHash: hash,
          targetDatabaseFingerprint: FP,
          memberships,
          targetPolicyUid: `policy-${i % policies}`,
          accessPolicyUid: `access-${i % policies}`,
        },
      },
    };
    objects.set(`${NS}/${name}`, request as unknown as CachedObject);
    const planName = scopedPlanName({ name, uid }, 'Activate', hash);
    plans.set(planName, {
      metadata: { name: planName },
      spec: {
        origin: { kind: 'EphemeralAccessRequest', uid },
        scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: hash },
      },
      status: { phase: 'Applied' },
    });
  }
  return { objects, plans };
}

/** anchoredRequests as it was: each request's plan named and looked up before its target was compared. */
function legacyHolders(
  policyUid: string,
  requests: readonly HolderRequest[],
  planNamed: (name: string) => AnchorPlan | undefined,
): number {
  let held = 0;
  for (const request of requests) {
    const resolved = request.status?.resolvedAccess;
    if (resolved == null || !COMPOSED_PHASES.includes(request.status?.phase ?? '')) continue;
    const planName = activationPlanName(request);
    const plan = planName === undefined ? undefined : planNamed(planName);
    if (!hasActivationAnchor(request, plan, policyUid)) continue;
    held += 1;
  }
  return held;
}

/** The three reads of one policy's holders, as named above. */
export function heldAccessVariants(
  requests = 1_000,
  policies = 50,
): Readonly<Record<'today' | 'reordered' | 'legacy', () => unknown>> {
  const { objects, plans } = fleet(requests, policies);
  const planNamed = (name: string): AnchorPlan | undefined => plans.get(name);
  let next = 0;
  const policy = (): string => `policy-${next++ % policies}`;
  const holders = (policyUid: string, list: readonly CachedObject[]): number =>
    anchoredRequests({
      policyUid,
      requests: list as unknown as readonly HolderRequest[],
      planNamed,
      phases: COMPOSED_PHASES,
    }).length;
  const expected = requests / policies;
  const check = (held: number): number => {
    if (held !== expected) throw new Error(`held access found ${held} holders, not ${expected}`);
    return held;
  };
  return {
    today: () => {
      const uid = policy();
      return check(holders(uid, objects.withFields(NS, { targetPolicyUid: uid })));
    },
    reordered: () => check(holders(policy(), objects.inNamespace(NS))),
    legacy: () =>
      check(
        legacyHolders(policy(), objects.inNamespace(NS) as unknown as readonly HolderRequest[], planNamed),
      ),
  };
}
