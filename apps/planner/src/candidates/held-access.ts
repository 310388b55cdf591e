// The seam for ephemeral access (issue 13): a candidate is planned with its policy's held access of active
// ephemeral memberships, so a proposal never plans to revoke access someone holds right now. Pure.
import { compareCodePoints, type DesiredState, type MembershipEdge } from '@rolepolicy/policy';

/**
 * `desired` plus the held edges whose granted role or member the candidate declares (docs/candidates.md,
 * section 2); edges already declared are not duplicated. No held access returns `desired` unchanged.
 */
export function withHeldAccess(desired: DesiredState, heldAccess: readonly MembershipEdge[]): DesiredState {
  if (heldAccess.length === 0) return desired;
  const declared = new Set(desired.roles.map((r) => r.name));
  const key = (e: MembershipEdge) => JSON.stringify([e.role, e.member]);
  const present = new Set(desired.memberships.map(key));
  const added = heldAccess.filter(
    (e) => (declared.has(e.role) || declared.has(e.member)) && !present.has(key(e)),
  );
  if (added.length === 0) return desired;
  const memberships = [...desired.memberships, ...added].sort(
    (a, b) => compareCodePoints(a.role, b.role) || compareCodePoints(a.member, b.member),
  );
  return { ...desired, memberships };
}
