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

/**
 * Phases whose requests are composed into the policy's held access. A Revoking one only while its revocation
 * is under way ({@link revocationUnderWay}): its live edge is its own revocation's to remove, and a base pass
 * that planned the same REVOKE beside it raced it (ADR 0008, amended 2026-11-28).
 */
export const COMPOSED_PHASES: readonly string[] = ['Applying', 'Active', 'Revoking'];

/** A request as {@link anchoredRequests} reads it: the anchor fields, the subject of its spec, its last error. */
export type HolderRequest = AnchorRequest & {
  readonly spec?: { readonly subject?: { readonly role?: string } } | null;
  readonly status?: { readonly lastError?: string | null } | null;
};

/**
 * False for a Revoking request whose revocation failed (the scheduler records the failure in `lastError` and
 * tries again): from then on the base policy's passes remove the edge as well, as the backstop they were for
 * every Revoking request before. True for any other request.
 */
export function revocationUnderWay(request: HolderRequest): boolean {
  const status = request.status;
  return status?.phase !== 'Revoking' || status.lastError == null || status.lastError === '';
}

/** What {@link anchoredRequests} reads. */
export interface HolderSources {
  /** The uid of the target PostgresPolicy. */
  readonly policyUid: string;
  /** EphemeralAccessRequests of the policy's namespace (any phase; unrelated ones are ignored). */
  readonly requests: readonly HolderRequest[];
  /** The plan of that name in the namespace, as the service reads it now. */
  readonly planNamed: (name: string) => AnchorPlan | undefined;
  /**
   * Which requests count: `held-access` ({@link COMPOSED_PHASES}, a Revoking one while {@link revocationUnderWay})
   * for the composition of held access, `owners` (HOLDING_PHASES, the default) for other owners of an edge and
   * a request's own revocation; or a list of phases.
   */
  readonly phases?: readonly string[] | 'held-access' | 'owners';
}

/**
 * The requests holding access on the policy: in one of `phases`, with a verified snapshot targeting the
 * policy and granting to the request's subject only, and an activation plan (Applying or Applied) that
 * anchors it. Sorted by name, then uid.
 */
export function anchoredRequests(sources: HolderSources): AnchoredRequest[] {
  const heldAccess = sources.phases === 'held-access';
  const phases = heldAccess
    ? COMPOSED_PHASES
    : sources.phases === undefined || sources.phases === 'owners'
      ? HOLDING_PHASES
      : sources.phases;
  const out: AnchoredRequest[] = [];
  for (const request of sources.requests) {
    const resolved = request.status?.resolvedAccess;
    const uid = request.metadata.uid;
    if (resolved == null || uid === undefined || !phases.includes(request.status?.phase ?? '')) continue;
    if (heldAccess && !revocationUnderWay(request)) continue;
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
