// The held access of one PostgresPolicy, read from a ResourceCache (requests and plans of its
// namespace) and composed with the pure held-access composition of libs/policy. The planner and the executor's re-plan
// both call this, so they compose the same desired memberships and their digests agree (ADR 0008).
import type { ResourceCache } from '@rolepolicy/contracts';
import {
  anchoredRequests,
  composeHeldAccess,
  heldAccessConflictMessage,
  withHeldAccess,
  type DesiredState,
  type MembershipEdge,
  type HeldAccessConflict,
} from '@rolepolicy/policy';
import type { ConditionReason } from './condition-reasons.js';

/** Condition reason (and failure reason) when active access conflicts with the base policy. */
export const EPHEMERAL_ACCESS_CONFLICT = 'EphemeralAccessConflict' satisfies ConditionReason;

/** Held access applied to a desired state, or the conflicts that block the durable reconcile. */
export type PolicyHeldAccess =
  | {
      readonly ok: true;
      /** `desired` with the held edges in its memberships (the same object when there are none). */
      readonly desired: DesiredState;
      /** Held access's edges alone (admin false), e.g. for candidate planning in the parent's context. */
      readonly edges: readonly MembershipEdge[];
    }
  | { readonly ok: false; readonly conflicts: readonly HeldAccessConflict[]; readonly message: string };

/** The cache reads this needs (the planner's and the executor's caches follow both kinds). */
export type HeldAccessReader = Pick<ResourceCache, 'get' | 'withFields'>;

/**
 * Composes held access of the requests holding access on the policy (`namespace`, `uid`) into `desired`.
 * `targetFingerprint` is the logical fingerprint of the policy's current connection (the snapshot's
 * `identity.logical_fingerprint`); null (unknown) conflicts with every holder, never silently drops one.
 * `live` (the snapshot's memberships) keeps only the held edges the database has: the base policy never
 * revokes a held edge, but it never grants one either. Only the request's own Activate plan grants it (its
 * provenance); otherwise a base pass that ran while the activation was `Applying` granted the edge itself,
 * the activation found nothing to do and the revocation then had nothing to revoke.
 */
export function policyHeldAccess(
  reader: HeldAccessReader,
  policy: { readonly namespace: string; readonly uid: string },
  desired: DesiredState,
  targetFingerprint: string | null,
  live?: readonly Pick<MembershipEdge, 'role' | 'member'>[],
): PolicyHeldAccess {
  // Only a request resolved to this policy can hold access on it: the index, not the namespace's every request.
  const requests = reader.withFields('ephemeralaccessrequest', policy.namespace, {
    targetPolicyUid: policy.uid,
  });
  const holders = anchoredRequests({
    policyUid: policy.uid,
    requests,
    planNamed: (name) => reader.get('postgrespolicyplan', policy.namespace, name),
    phases: 'held-access',
  });
  if (holders.length === 0) return { ok: true, desired, edges: [] };
  const heldAccess = composeHeldAccess({
    desired: desired.memberships,
    roles: desired.roles.map((r) => r.name),
    requests: holders,
    targetFingerprint: targetFingerprint ?? '(unknown)',
  });
  if (heldAccess.conflicts.length > 0) {
    return {
      ok: false,
      conflicts: heldAccess.conflicts,
      message: heldAccessConflictMessage(heldAccess.conflicts),
    };
  }
  const present = live === undefined ? null : new Set(live.map((e) => `${e.role}\u0000${e.member}`));
  const edges =
    present === null
      ? heldAccess.edges
      : heldAccess.edges.filter((e) => present.has(`${e.role}\u0000${e.member}`));
  return {
    ok: true,
    desired: { ...desired, memberships: withHeldAccess(desired.memberships, { edges }) },
    edges,
  };
}
