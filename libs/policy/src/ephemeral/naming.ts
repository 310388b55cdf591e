// Deterministic names of the scoped plans of an ephemeral access request: a restarted scheduler finds the
// plan it already made instead of making another, and the activation plan is findable by name (provenance).

/** What a scoped plan does. */
export type ScopeOperation = 'Activate' | 'Revoke';

/** `spec.scope.kind` of ephemeral access plans. */
export const MEMBERSHIP_BUNDLE_SCOPE = 'MembershipBundle';

/** `spec.origin.kind` of ephemeral access plans. */
export const EPHEMERAL_REQUEST_ORIGIN = 'EphemeralAccessRequest';

const MAX_NAME = 253;

/**
 * `<request name>-<first 8 alphanumerics of its uid>-<activate|revoke>-<first 12 hex of the bundle hash>`,
 * the request name shortened (and any trailing `-`/`.` dropped) so the whole stays a valid name of at most
 * 253 characters. The uid part keeps a recreated request with the same name from finding the old plans.
 *
 * @example scopedPlanName({ name: 'alice-ro', uid: '6f1c2d3e-…' }, 'Activate', 'sha256:0123456789abcdef…')
 *          // 'alice-ro-6f1c2d3e-activate-0123456789ab'
 */
export function scopedPlanName(
  request: { readonly name: string; readonly uid: string },
  operation: ScopeOperation,
  bundleHash: string,
): string {
  const uid = request.uid
    .replace(/[^a-z0-9]/gi, '')
    .slice(0, 8)
    .toLowerCase();
  const hash = bundleHash.replace(/^sha256:/, '').slice(0, 12);
  const suffix = `-${uid}-${operation.toLowerCase()}-${hash}`;
  const base = request.name.slice(0, MAX_NAME - suffix.length).replace(/[-.]+$/, '');
  return `${base}${suffix}`;
}
