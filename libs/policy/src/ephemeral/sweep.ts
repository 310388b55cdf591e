// The sweep of a target policy's ephemeral edges (ADR 0020, "The sweep"): which live memberships of bundle
// roles to the policy's roles nobody holds any more, and the escape check a sweep passes before SQL. Pure.
import { compareCodePoints } from '../canonical-order.js';
import { compareMembershipKeys, compareNullable } from '../canonical-order.js';
import type { Change, ChangeOf } from '../model/change.js';
import type { MembershipEdge } from '../model/state.js';
import type { EscapeCheck } from './scoped-changes.js';
import type { AnchoredRequest } from './held-access.js';

/** What {@link sweepChanges} reads. */
export interface SweepInput {
  /** Every role a bundle of an access policy naming the target lists (the only roles a sweep touches). */
  readonly bundleRoles: readonly string[];
  /** The roles of the target's expanded policy (the only members a sweep touches). */
  readonly members: readonly string[];
  /** Live membership rows whose granted role is a bundle role (PostgreSQL 16+: one row per grantor). */
  readonly live: readonly MembershipEdge[];
  /** The target's declared (durable) memberships, without any held access. */
  readonly durable: readonly MembershipEdge[];
  /** Requests holding access on the target (anchored, Revoking included), whatever their fingerprint. */
  readonly holders: readonly AnchoredRequest[];
}

/** One swept edge (role, member), for the report. */
export interface SweptEdge {
  readonly role: string;
  readonly member: string;
}

/** The result of {@link sweepChanges}. */
export interface SweepChanges {
  /** remove_member changes, in (role, member, grantor) order; empty when nothing is orphaned. */
  readonly changes: readonly ChangeOf<'remove_member'>[];
  /** The edges those changes remove (one per role and member). */
  readonly swept: readonly SweptEdge[];
  /** Live bundle edges kept: declared by the policy or held by an anchored request. */
  readonly kept: number;
}

const keyOf = (e: { readonly role: string; readonly member: string }): string =>
  JSON.stringify([e.role, e.member]);

/**
 * The live edges a sweep revokes: every row of a bundle role to a role of the policy, except edges the
 * policy declares and edges an anchored request holds (any `inherit`, any grantor: a sweep never judges the
 * options of held access, the request's own Revoke does). Edges to roles the policy does not name are never
 * touched (a DBA's grant to an unmanaged role is not ours to judge).
 */
export function sweepChanges(input: SweepInput): SweepChanges {
  const bundle = new Set(input.bundleRoles);
  const members = new Set(input.members);
  const keep = new Set([
    ...input.durable.map(keyOf),
    ...input.holders.flatMap((h) => h.memberships.map(keyOf)),
  ]);
  const changes: ChangeOf<'remove_member'>[] = [];
  const swept = new Map<string, SweptEdge>();
  const seen = new Set<string>();
  let kept = 0;
  for (const row of input.live) {
    if (!bundle.has(row.role) || !members.has(row.member)) continue;
    const edge = keyOf(row);
    const rowKey = JSON.stringify([row.role, row.member, row.grantor ?? null]);
    if (seen.has(rowKey)) continue;
    seen.add(rowKey);
    if (keep.has(edge)) {
      kept += 1;
      continue;
    }
    changes.push({ kind: 'remove_member', role: row.role, member: row.member, grantor: row.grantor ?? null });
    swept.set(edge, { role: row.role, member: row.member });
  }
  return {
    changes: changes.sort((a, b) => compareMembershipKeys(a, b) || compareNullable(a.grantor, b.grantor)),
    swept: [...swept.values()].sort(
      (a, b) => compareCodePoints(a.role, b.role) || compareCodePoints(a.member, b.member),
    ),
    kept,
  };
}

/**
 * The escape check of a sweep, on the changes about to run: only remove_member, of a bundle role, from a
 * role of the policy, never an edge the policy declares or an anchored request holds. A sweep never grants.
 */
export function sweepEscapeCheck(changes: readonly Change[], input: SweepInput): EscapeCheck {
  const bundle = new Set(input.bundleRoles);
  const members = new Set(input.members);
  const keep = new Set([
    ...input.durable.map(keyOf),
    ...input.holders.flatMap((h) => h.memberships.map(keyOf)),
  ]);
  for (const [index, change] of changes.entries()) {
    const at = `change ${index + 1} (${change.kind})`;
    if (change.kind !== 'remove_member') {
      return { ok: false, message: `${at}: a sweep may only contain remove_member changes` };
    }
    if (!bundle.has(change.role)) {
      return { ok: false, message: `${at}: role ${change.role} is not a bundle role of any access policy` };
    }
    if (!members.has(change.member)) {
      return { ok: false, message: `${at}: role ${change.member} is not a role of the target policy` };
    }
    if (keep.has(keyOf(change))) {
      return {
        ok: false,
        message: `${at}: membership ${change.role} -> ${change.member} is declared or held by an active request`,
      };
    }
  }
  return { ok: true };
}
