// Which requests hold access on a policy, read from the requests and plans a service sees: each must carry
// its provenance anchor (hasActivationAnchor), so a forged request status is never composed or counted. Pure.
import { compareCodePoints } from '../canonical-order.js';
import type { AnchoredRequest } from './held-access.js';
import {
  activationPlanName,
  hasActivationAnchor,
  HOLDING_PHASES,
  type AnchorPlan,
  type AnchorRequest,
} from './provenance.js';

/** Phases whose requests are composed into the policy's held access (Revoking ones are on their way out). */
export const COMPOSED_PHASES: readonly string[] = ['Applying', 'Active'];

/** A request as {@link anchoredRequests} reads it: the anchor fields and the subject of its spec. */
export type HolderRequest = AnchorRequest & {
  readonly spec?: { readonly subject?: { readonly role?: string } } | null;
};

/** What {@link anchoredRequests} reads. */
export interface HolderSources {
  /** The uid of the target PostgresPolicy. */
  readonly policyUid: string;
  /** EphemeralAccessRequests of the policy's namespace (any phase; unrelated ones are ignored). */
  readonly requests: readonly HolderRequest[];
  /** The plan of that name in the namespace, as the service reads it now. */
  readonly planNamed: (name: string) => AnchorPlan | undefined;
  /** Phases that count: {@link COMPOSED_PHASES} for held access, HOLDING_PHASES (default) for other owners. */
  readonly phases?: readonly string[];
}

/**
 * The requests holding access on the policy: in one of `phases`, with a verified snapshot targeting the
 * policy and granting to the request's subject only, and an activation plan (Applying or Applied) that
 * anchors it. Sorted by name, then uid.
 */
export function anchoredRequests(sources: HolderSources): AnchoredRequest[] {
  const phases = sources.phases ?? HOLDING_PHASES;
  const out: AnchoredRequest[] = [];
  for (const request of sources.requests) {
    const resolved = request.status?.resolvedAccess;
    const uid = request.metadata.uid;
    if (resolved == null || uid === undefined || !phases.includes(request.status?.phase ?? '')) continue;
    // hasActivationAnchor refuses any other target; checked here first, before hashing a plan name and
    // looking the plan up, since most requests a caller passes (a namespace's) target other policies.
    if (resolved.targetPolicyUid !== sources.policyUid) continue;
    const planName = activationPlanName(request);
    const plan = planName === undefined ? undefined : sources.planNamed(planName);
    if (!hasActivationAnchor(request, plan, sources.policyUid)) continue;
    // A snapshot granting to anyone but the spec's subject was not written by the resolver: it holds nothing.
    const subject = request.spec?.subject?.role;
    if (subject === undefined || resolved.memberships.some((m) => m.member !== subject)) continue;
    out.push({
      name: request.metadata.name,
      uid,
      targetDatabaseFingerprint: resolved.targetDatabaseFingerprint,
      memberships: resolved.memberships.map(({ role, member, inherit }) => ({ role, member, inherit })),
    });
  }
  return out.sort((a, b) => compareCodePoints(a.name, b.name) || compareCodePoints(a.uid, b.uid));
}
