// Held-access composition: the memberships that active ephemeral access holds, added to a PostgresPolicy's
// desired memberships so an authoritative reconcile keeps them (and removes stray edges nobody holds). Pure.
import { compareCodePoints } from '../canonical-order.js';
import { compareMembershipKeys } from '../canonical-order.js';
import type { MembershipEdge } from '../model/state.js';
import type { BundleMembership } from './bundle.js';

/** One membership of a resolved bundle: `member` (the subject) gets `role`, admin never. */
export type HeldMembership = BundleMembership;

/** A request that counts as holding access: anchored by its activation plan, resolved to this policy. */
export interface AnchoredRequest {
  readonly name: string;
  readonly uid: string;
  /** `resolvedAccess.targetDatabaseFingerprint`. */
  readonly targetDatabaseFingerprint: string;
  /** `resolvedAccess.memberships` (verified). */
  readonly memberships: readonly HeldMembership[];
}

/** Why held access cannot be composed; each blocks the durable reconcile of the policy. */
export type HeldAccessConflictKind =
  'TargetFingerprintChanged' | 'GrantedRoleNotInPolicy' | 'SubjectNotInPolicy' | 'ConflictingInherit';

/** One conflict, with a message naming the request(s) and uid(s). */
export interface HeldAccessConflict {
  readonly kind: HeldAccessConflictKind;
  readonly requests: readonly { readonly name: string; readonly uid: string }[];
  readonly message: string;
}

/** An held edge the base policy already declares: nothing is added for it. */
export interface SkippedHeldEdge {
  readonly request: { readonly name: string; readonly uid: string };
  readonly membership: HeldMembership;
  /** True when the declared edge has other options (inherit, or admin) than the request's. */
  readonly optionsDiffer: boolean;
}

/** The result of {@link composeHeldAccess}. */
export interface HeldAccess {
  /** Edges to add to the desired memberships (admin false), sorted by (role, member); empty on conflict. */
  readonly edges: readonly MembershipEdge[];
  readonly skipped: readonly SkippedHeldEdge[];
  readonly conflicts: readonly HeldAccessConflict[];
}

/** What {@link composeHeldAccess} reads. */
export interface HeldAccessInput {
  /** The policy's expanded desired memberships (without any held access). */
  readonly desired: readonly MembershipEdge[];
  /** Names of the roles of the policy's expanded desired graph (declared, generated and external). */
  readonly roles: readonly string[];
  /** Requests holding access on this policy (anchored and resolved to its uid), in any order. */
  readonly requests: readonly AnchoredRequest[];
  /** logicalFingerprint(host, port, database) of the policy's current connection. */
  readonly targetFingerprint: string;
}

const edgeKey = (e: { readonly role: string; readonly member: string }): string =>
  JSON.stringify([e.role, e.member]);

const describe = (r: { readonly name: string; readonly uid: string }): string =>
  `request ${r.name} (uid ${r.uid})`;

const byName = (
  a: { readonly name: string; readonly uid: string },
  b: { readonly name: string; readonly uid: string },
): number => compareCodePoints(a.name, b.name) || compareCodePoints(a.uid, b.uid);

/**
 * Composes held access of `requests` into the policy's desired memberships. Every membership of every
 * request is checked; the edges are added only when nothing conflicts (a conflict blocks the durable
 * reconcile, so neither revoking held access nor keeping an edge silently happens). Deterministic: the
 * result does not depend on the order of `requests`, so the planner and the executor compose one held access.
 */
export function composeHeldAccess(input: HeldAccessInput): HeldAccess {
  const roles = new Set(input.roles);
  const declared = new Map(input.desired.map((e) => [edgeKey(e), e]));
  const requests = [...input.requests].sort(byName);
  const conflicts: HeldAccessConflict[] = [];
  const skipped: SkippedHeldEdge[] = [];
  // (role, member) -> the inherit each holder asks for, with its holders.
  const held = new Map<string, { membership: HeldMembership; holders: Map<boolean, AnchoredRequest[]> }>();

  for (const request of requests) {
    const who = { name: request.name, uid: request.uid };
    if (request.targetDatabaseFingerprint !== input.targetFingerprint) {
      conflicts.push({
        kind: 'TargetFingerprintChanged',
        requests: [who],
        message:
          `${describe(who)} holds access on database ${request.targetDatabaseFingerprint}, but the policy ` +
          `now connects to ${input.targetFingerprint}; restore the connection or end the request`,
      });
      continue;
    }
    for (const m of request.memberships) {
      if (!roles.has(m.role)) {
        conflicts.push({
          kind: 'GrantedRoleNotInPolicy',
          requests: [who],
          message: `${describe(who)} holds role ${m.role} for ${m.member}, but the policy no longer declares role ${m.role}`,
        });
        continue;
      }
      if (!roles.has(m.member)) {
        conflicts.push({
          kind: 'SubjectNotInPolicy',
          requests: [who],
          message: `${describe(who)} holds role ${m.role} for ${m.member}, but the policy no longer declares subject role ${m.member}`,
        });
        continue;
      }
      const durable = declared.get(edgeKey(m));
      if (durable !== undefined) {
        skipped.push({
          request: who,
          membership: m,
          optionsDiffer: durable.inherit !== m.inherit || durable.admin,
        });
        continue;
      }
      const entry = held.get(edgeKey(m)) ?? { membership: m, holders: new Map() };
      entry.holders.set(m.inherit, [...(entry.holders.get(m.inherit) ?? []), request]);
      held.set(edgeKey(m), entry);
    }
  }

  const edges: MembershipEdge[] = [];
  for (const { membership, holders } of held.values()) {
    if (holders.size > 1) {
      const withInherit = (holders.get(true) ?? []).map((r) => ({ name: r.name, uid: r.uid }));
      const without = (holders.get(false) ?? []).map((r) => ({ name: r.name, uid: r.uid }));
      conflicts.push({
        kind: 'ConflictingInherit',
        requests: [...withInherit, ...without].sort(byName),
        message:
          `membership ${membership.role} -> ${membership.member} is held with inherit true by ` +
          `${withInherit.map(describe).join(', ')} and with inherit false by ${without.map(describe).join(', ')}`,
      });
      continue;
    }
    edges.push({
      role: membership.role,
      member: membership.member,
      inherit: membership.inherit,
      admin: false,
    });
  }
  edges.sort(compareMembershipKeys);
  return { edges: conflicts.length > 0 ? [] : edges, skipped, conflicts };
}

/**
 * The desired memberships with the held edges added, in the canonical (role, member) order the
 * expansion produces. Held access never replaces a declared edge ({@link composeHeldAccess} skips those).
 */
export function withHeldAccess(
  desired: readonly MembershipEdge[],
  heldAccess: Pick<HeldAccess, 'edges'>,
): readonly MembershipEdge[] {
  if (heldAccess.edges.length === 0) return desired;
  return [...desired, ...heldAccess.edges].sort(compareMembershipKeys);
}

/** One line per conflict, for a policy condition message (the first few, then a count). */
export function heldAccessConflictMessage(conflicts: readonly HeldAccessConflict[], limit = 5): string {
  const shown = conflicts.slice(0, limit).map((c) => c.message);
  const more = conflicts.length > limit ? `; and ${conflicts.length - limit} more` : '';
  return `ephemeral access blocks the reconcile: ${shown.join('; ')}${more}`;
}
