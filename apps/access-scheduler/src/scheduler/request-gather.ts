// Gather, for one request's pass: its access policy, its target (as it is now, and as it was when the
// request resolved), its resolution against them (reading the target's database fingerprint through the
// gateway only when the rest is acceptable) and its two scoped plans with our own writes on top.
import type { Cached, ResourceCache } from '@rolepolicy/contracts';
import { validateAccessPolicy, type ClusterLimits } from '../lifecycle/access-policy.js';
import type { RequestInput } from '../lifecycle/request-machine.js';
import { resolveRequest, type FingerprintRead } from '../lifecycle/resolution.js';
import { planNameOf } from '../lifecycle/scoped-plan.js';
import { targetView } from '../lifecycle/target.js';

type EphemeralAccessRequest = Cached<'ephemeralaccessrequest'>;
type PostgresPolicy = Cached<'postgrespolicy'>;
type PostgresPolicyPlan = Cached<'postgrespolicyplan'>;

/** What gathering reads. */
export interface RequestGatherDeps {
  readonly cache: Pick<ResourceCache, 'get' | 'list'>;
  readonly limits: ClusterLimits;
  /** A scoped plan as the scheduler sees it (its own writes included). */
  plan(ns: string, name: string): PostgresPolicyPlan | undefined;
  /** The target's database fingerprint, read through the gateway. */
  fingerprint(target: PostgresPolicy): Promise<FingerprintRead>;
}

/** What the request's decision reads (all of RequestInput but the clock and the admission report). */
export type RequestFacts = Pick<RequestInput, 'resolution' | 'target'> & {
  readonly request: EphemeralAccessRequest;
  readonly activationPlan: PostgresPolicyPlan | undefined;
  readonly revokePlan: PostgresPolicyPlan | undefined;
};

/** The facts of one request's pass. */
export async function gatherRequest(
  deps: RequestGatherDeps,
  request: EphemeralAccessRequest,
): Promise<RequestFacts> {
  const ns = request.metadata.namespace;
  const accessPolicy = deps.cache.get('ephemeralaccesspolicy', ns, request.spec.accessPolicyRef.name) ?? null;
  const policies = deps.cache.list('postgrespolicy', ns);
  const resolved = request.status?.resolvedAccess ?? null;
  const phase = request.status?.phase ?? 'Pending';
  // A target being deleted takes no new access; one resolved before keeps it until revoked (snapshotTarget).
  const currentTarget =
    accessPolicy === null
      ? undefined
      : policies.find(
          (p) =>
            p.metadata.name === accessPolicy.spec.postgresPolicyRef.name &&
            p.metadata.deletionTimestamp === undefined,
        );
  const snapshotTarget =
    resolved === null ? currentTarget : policies.find((p) => p.metadata.uid === resolved.targetPolicyUid);
  const currentView = currentTarget === undefined ? null : targetView(currentTarget);
  let resolution: RequestFacts['resolution'] = null;
  const deleting = request.metadata.deletionTimestamp !== undefined;
  if (!deleting && (phase === 'Pending' || phase === 'PendingApproval' || phase === 'Applying')) {
    const acceptable =
      accessPolicy !== null &&
      currentTarget !== undefined &&
      validateAccessPolicy(accessPolicy, currentView, deps.limits).ok &&
      accessPolicy.spec.suspend !== true &&
      currentView?.suspended !== true;
    const fingerprint = acceptable ? await deps.fingerprint(currentTarget!) : undefined;
    resolution = resolveRequest({
      request,
      accessPolicy,
      target: currentView,
      limits: deps.limits,
      fingerprint,
    });
  }
  return {
    request,
    resolution,
    target: snapshotTarget === undefined ? null : targetView(snapshotTarget),
    activationPlan: resolved === null ? undefined : deps.plan(ns, planNameOf(request, 'Activate')),
    revokePlan: resolved === null ? undefined : deps.plan(ns, planNameOf(request, 'Revoke')),
  };
}
