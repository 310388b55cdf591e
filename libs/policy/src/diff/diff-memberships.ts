// Membership diff keyed on (role, member): add missing, remove + add on flag change, remove undeclared.
// Carries the PG16 grantor on removals and ignores the CREATEROLE self-grant edge to the executor.

import type { ChangeOf } from '../model/change.js';
import type { MembershipEdge } from '../model/state.js';
import { membershipKeyId } from './keys.js';
import { compareMembershipKeys, compareNullable } from '../canonical-order.js';

const PG16_NUM = 160000;

/** Inputs of the membership diff. */
export interface MembershipDiffInput {
  readonly desired: readonly MembershipEdge[];
  /** Live edges whose granted role is managed by this policy (PG16+: one row per grantor). */
  readonly current: readonly MembershipEdge[];
  readonly executorRole: string;
  readonly serverVersionNum: number;
}

/**
 * remove_member and add_member changes. Unmanaged-role rules are applied later (unmanaged.ts).
 * PG16+ keeps one row per grantor and `REVOKE ... GRANTED BY g` removes only g's row, so a removal is
 * planned per grantor row; otherwise the edge would survive and the next plan would revoke it again.
 */
export function diffMemberships(input: MembershipDiffInput): {
  removes: readonly ChangeOf<'remove_member'>[];
  adds: readonly ChangeOf<'add_member'>[];
} {
  const desired = new Map(input.desired.map((e) => [membershipKeyId(e), e]));
  const current = rowsByKey(
    input.current.filter((e) => !isCreateRoleSelfGrant(e, input.executorRole, input.serverVersionNum)),
  );
  const removes: ChangeOf<'remove_member'>[] = [];
  const adds: ChangeOf<'add_member'>[] = [];
  for (const [id, want] of desired) {
    const rows = current.get(id) ?? [];
    const held = rows[0];
    // Before PostgreSQL 16 an edge has no inherit option of its own: the live value is the member's
    // rolinherit, so comparing it would plan the same revoke + grant on every cycle.
    const inheritMatches = input.serverVersionNum < PG16_NUM || held?.inherit === want.inherit;
    if (held !== undefined && inheritMatches && held.admin === want.admin) continue;
    removes.push(...rows.map(removal));
    adds.push({
      kind: 'add_member',
      role: want.role,
      member: want.member,
      inherit: want.inherit,
      admin: want.admin,
    });
  }
  for (const [id, rows] of current) if (!desired.has(id)) removes.push(...rows.map(removal));
  const byKeyThenGrantor = (a: ChangeOf<'remove_member'>, b: ChangeOf<'remove_member'>): number =>
    compareMembershipKeys(a, b) || compareNullable(a.grantor, b.grantor);
  return { removes: removes.sort(byKeyThenGrantor), adds: adds.sort(compareMembershipKeys) };
}

/**
 * PG16+: a non-superuser CREATEROLE executor that creates a role gets an implicit ADMIN edge
 * created-role -> executor granted by the bootstrap superuser. Revoking it no-ops or strips our own admin.
 */
export function isCreateRoleSelfGrant(
  edge: MembershipEdge,
  executorRole: string,
  serverVersionNum: number,
): boolean {
  return serverVersionNum >= 160000 && edge.member === executorRole && (edge.grantor ?? null) === null;
}

/** Live rows per (role, member), one per distinct grantor, canonically ordered (null grantor first). */
function rowsByKey(edges: readonly MembershipEdge[]): Map<string, MembershipEdge[]> {
  const sorted = [...edges].sort(
    (a, b) => compareMembershipKeys(a, b) || compareNullable(a.grantor ?? null, b.grantor ?? null),
  );
  const map = new Map<string, MembershipEdge[]>();
  for (const edge of sorted) {
    const id = membershipKeyId(edge);
    const rows = map.get(id);
    if (rows === undefined) map.set(id, [edge]);
    else if (!rows.some((r) => (r.grantor ?? null) === (edge.grantor ?? null))) rows.push(edge);
  }
  return map;
}

function removal(edge: MembershipEdge): ChangeOf<'remove_member'> {
  return { kind: 'remove_member', role: edge.role, member: edge.member, grantor: edge.grantor ?? null };
}
