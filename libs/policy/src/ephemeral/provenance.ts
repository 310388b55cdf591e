// The provenance anchor of ephemeral access: a request holds access only while its activation plan exists
// (Applying or Applied) and matches its verified snapshot. A forged request status alone grants nothing.

import { verifyResolvedAccess, type ResolvedBundle } from './bundle.js';
import { EPHEMERAL_REQUEST_ORIGIN, MEMBERSHIP_BUNDLE_SCOPE, scopedPlanName } from './naming.js';

/** Request phases in which a request may hold access (Revoking: until its revocation ran). */
export const HOLDING_PHASES: readonly string[] = ['Applying', 'Active', 'Revoking'];

/** The fields of an EphemeralAccessRequest the anchor check reads. */
export interface AnchorRequest {
  readonly metadata: { readonly name: string; readonly uid?: string };
  readonly status?: {
    readonly phase?: string | null;
    readonly resolvedAccess?: (ResolvedBundle & { readonly targetPolicyUid: string }) | null;
  } | null;
}

/** The fields of a PostgresPolicyPlan the anchor check reads. */
export interface AnchorPlan {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly origin?: { readonly kind: string; readonly uid: string } | null;
    readonly scope?: {
      readonly kind: string;
      readonly operation: string;
      readonly bundleHash: string;
    } | null;
  };
  readonly status?: { readonly phase?: string | null } | null;
}

/** The name of a request's activation plan, or undefined while the request has no verified snapshot. */
export function activationPlanName(request: AnchorRequest): string | undefined {
  const resolved = request.status?.resolvedAccess;
  const uid = request.metadata.uid;
  if (resolved == null || uid === undefined) return undefined;
  return scopedPlanName({ name: request.metadata.name, uid }, 'Activate', resolved.bundleHash);
}

/**
 * Whether `request` holds access on the policy with uid `policyUid`, anchored by `plan` (the plan named
 * {@link activationPlanName}, as read from the cluster, or undefined): a holding phase, a snapshot that
 * verifies and targets this policy, and an activation plan of this request for this bundle that is
 * Applying or Applied.
 */
export function hasActivationAnchor(
  request: AnchorRequest,
  plan: AnchorPlan | undefined,
  policyUid: string,
): boolean {
  const status = request.status;
  const resolved = status?.resolvedAccess;
  if (status == null || resolved == null || plan === undefined) return false;
  if (!HOLDING_PHASES.includes(status.phase ?? '')) return false;
  if (resolved.targetPolicyUid !== policyUid || !verifyResolvedAccess(resolved).ok) return false;
  if (plan.metadata.name !== activationPlanName(request)) return false;
  const { origin, scope } = plan.spec;
  return (
    origin?.kind === EPHEMERAL_REQUEST_ORIGIN &&
    origin.uid === request.metadata.uid &&
    scope?.kind === MEMBERSHIP_BUNDLE_SCOPE &&
    scope.operation === 'Activate' &&
    scope.bundleHash === resolved.bundleHash &&
    (plan.status?.phase === 'Applying' || plan.status?.phase === 'Applied')
  );
}
