// The changes of one scoped plan (Activate or Revoke a request's membership bundle) from the live state of
// the bundle roles and the subject, the base policy's declared edges and the other holders; and the escape
// check every scoped execution runs on them before any SQL. Pure.
import { compareMembershipKeys, compareNullable } from '../canonical-order.js';
import type { Change, ChangeOf } from '../model/change.js';
import type { MembershipEdge } from '../model/state.js';
import type { AnchoredRequest, HeldMembership } from './held-access.js';

/** The two scoped operations. */
export type ScopedOperation = 'Activate' | 'Revoke';

/** The live state a scoped plan reads (a snapshot of the bundle roles and the subject). */
export interface ScopedLiveState {
  /** Live membership rows whose granted role is a bundle role (PostgreSQL 16+: one row per grantor). */
  readonly memberships: readonly MembershipEdge[];
  /** Each role that exists, with its `rolinherit` (bundle roles and subject among them when present). */
  readonly roles: readonly { readonly name: string; readonly inherit: boolean }[];
  readonly serverVersionNum: number;
}

/** What {@link scopedChanges} reads. */
export interface ScopedChangesInput {
  readonly operation: ScopedOperation;
  readonly request: { readonly name: string; readonly uid: string };
  /** The request's verified `resolvedAccess.memberships`. */
  readonly memberships: readonly HeldMembership[];
  readonly live: ScopedLiveState;
  /** The base policy's declared (durable) memberships, without any held access. */
  readonly durable: readonly MembershipEdge[];
  /** Other requests holding access on the same policy (anchored; this request excluded). */
  readonly otherHolders: readonly AnchoredRequest[];
}

/** Why a scoped plan is refused (nothing runs). */
export type ScopedRefusalReason =
  'RoleMissing' | 'AlreadyDurable' | 'InheritUnsupported' | 'UnexpectedLiveEdge' | 'ConflictingInherit';

/** One refused membership. */
export interface ScopedRefusal {
  readonly reason: ScopedRefusalReason;
  readonly membership: HeldMembership;
  readonly message: string;
}

/** A membership kept on revoke because other anchored requests still hold it. */
export interface SharedMembership {
  readonly membership: HeldMembership;
  readonly holders: readonly { readonly name: string; readonly uid: string }[];
}

/** The result of {@link scopedChanges}. */
export interface ScopedChanges {
  /** add_member (Activate, admin false) or remove_member (Revoke) changes, in (role, member, grantor) order. */
  readonly changes: readonly (ChangeOf<'add_member'> | ChangeOf<'remove_member'>)[];
  /** Revoke: memberships kept because the base policy declares them. */
  readonly retained: readonly HeldMembership[];
  /** Revoke: memberships kept because other anchored requests hold them. */
  readonly shared: readonly SharedMembership[];
  /** Memberships already as the operation wants them (granted with these options / already gone). */
  readonly unchanged: readonly HeldMembership[];
  /** Non-empty: the plan is refused as a whole (one transaction: nothing partial). */
  readonly refusals: readonly ScopedRefusal[];
}

const PG16_NUM = 160000;

const keyOf = (e: { readonly role: string; readonly member: string }): string =>
  JSON.stringify([e.role, e.member]);

const edgeText = (m: HeldMembership): string =>
  `membership ${m.role} -> ${m.member} (inherit ${String(m.inherit)})`;

function rowsByEdge(rows: readonly MembershipEdge[]): Map<string, MembershipEdge[]> {
  const map = new Map<string, MembershipEdge[]>();
  for (const row of rows) {
    const list = map.get(keyOf(row)) ?? [];
    if (!list.some((r) => (r.grantor ?? null) === (row.grantor ?? null))) list.push(row);
    map.set(keyOf(row), list);
  }
  return map;
}

function holdersByEdge(
  holders: readonly AnchoredRequest[],
): Map<string, { request: AnchoredRequest; inherit: boolean }[]> {
  const map = new Map<string, { request: AnchoredRequest; inherit: boolean }[]>();
  for (const request of holders) {
    for (const m of request.memberships) {
      map.set(keyOf(m), [...(map.get(keyOf(m)) ?? []), { request, inherit: m.inherit }]);
    }
  }
  return map;
}

/**
 * Computes the membership changes of a scoped Activate or Revoke. Activate grants each membership that is
 * not live (admin false), accepts a live edge with the same options (an earlier attempt or another holder
 * granted it), and refuses missing roles, declared (durable) edges, edges with other options, holders asking
 * for another inherit, and (before PostgreSQL 16, where inherit is the member's attribute) an inherit that
 * differs from the subject's `rolinherit`. Revoke removes each live row (per grantor on 16+) except edges
 * the base policy declares (`retained`) and edges other anchored requests hold (`shared`).
 */
export function scopedChanges(input: ScopedChangesInput): ScopedChanges {
  const live = rowsByEdge(input.live.memberships);
  const durable = new Map(input.durable.map((e) => [keyOf(e), e]));
  const holders = holdersByEdge(input.otherHolders.filter((h) => h.uid !== input.request.uid));
  const roles = new Map(input.live.roles.map((r) => [r.name, r.inherit]));
  const pg16 = input.live.serverVersionNum >= PG16_NUM;
  const adds: ChangeOf<'add_member'>[] = [];
  const removes: ChangeOf<'remove_member'>[] = [];
  const retained: HeldMembership[] = [];
  const shared: SharedMembership[] = [];
  const unchanged: HeldMembership[] = [];
  const refusals: ScopedRefusal[] = [];
  const refuse = (reason: ScopedRefusalReason, membership: HeldMembership, message: string): void => {
    refusals.push({ reason, membership, message });
  };

  const bundle = [...input.memberships].sort(compareMembershipKeys);
  for (const m of bundle) {
    const rows = live.get(keyOf(m)) ?? [];
    const others = holders.get(keyOf(m)) ?? [];
    if (input.operation === 'Revoke') {
      if (durable.has(keyOf(m))) retained.push(m);
      else if (others.length > 0) {
        shared.push({
          membership: m,
          holders: others.map(({ request }) => ({ name: request.name, uid: request.uid })),
        });
      } else if (rows.length === 0) unchanged.push(m);
      else {
        for (const row of rows) {
          removes.push({
            kind: 'remove_member',
            role: m.role,
            member: m.member,
            grantor: row.grantor ?? null,
          });
        }
      }
      continue;
    }
    const missing = [m.role, m.member].filter((r) => !roles.has(r));
    if (missing.length > 0) {
      refuse('RoleMissing', m, `${edgeText(m)}: role ${missing.join(' and role ')} does not exist`);
      continue;
    }
    if (durable.has(keyOf(m))) {
      refuse(
        'AlreadyDurable',
        m,
        `${edgeText(m)} is declared by the base policy: it is not temporary access`,
      );
      continue;
    }
    if (!pg16 && roles.get(m.member) !== m.inherit) {
      refuse(
        'InheritUnsupported',
        m,
        `${edgeText(m)}: before PostgreSQL 16 inherit is the member's attribute, and role ${m.member} has ` +
          `INHERIT ${String(roles.get(m.member))}`,
      );
      continue;
    }
    const disagreeing = others.filter((o) => o.inherit !== m.inherit);
    if (disagreeing.length > 0) {
      const names = disagreeing.map(({ request }) => `request ${request.name} (uid ${request.uid})`);
      refuse(
        'ConflictingInherit',
        m,
        `${edgeText(m)}: ${names.join(', ')} hold it with inherit ${String(!m.inherit)}`,
      );
      continue;
    }
    if (rows.length === 0) {
      adds.push({ kind: 'add_member', role: m.role, member: m.member, inherit: m.inherit, admin: false });
      continue;
    }
    const differs = rows.filter((r) => r.admin || (pg16 && r.inherit !== m.inherit));
    if (differs.length > 0) {
      const row = differs[0]!;
      refuse(
        'UnexpectedLiveEdge',
        m,
        `${edgeText(m)}: the live edge has inherit ${String(row.inherit)} and admin ${String(row.admin)}` +
          (row.grantor ? ` (granted by ${row.grantor})` : ''),
      );
      continue;
    }
    unchanged.push(m);
  }
  const changes = [
    ...removes.sort((a, b) => compareMembershipKeys(a, b) || compareNullable(a.grantor, b.grantor)),
    ...adds.sort(compareMembershipKeys),
  ];
  return { changes, retained, shared, unchanged, refusals };
}

/** The result of {@link escapeCheck}. */
export type EscapeCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

/**
 * The escape check every scoped plan passes before SQL: the bundle grants to the request's subject only,
 * each change is an add_member (Activate) or a remove_member (Revoke) of a membership of the resolved
 * bundle, and a grant carries the bundle's inherit and never admin. Anything else means the plan would
 * touch what the request was never granted (a snapshot's hash proves only that it is self-consistent).
 */
export function escapeCheck(
  operation: ScopedOperation,
  changes: readonly Change[],
  bundle: readonly HeldMembership[],
  subject: string,
): EscapeCheck {
  const foreign = bundle.find((m) => m.member !== subject);
  if (foreign !== undefined) {
    return {
      ok: false,
      message: `the bundle grants role ${foreign.role} to ${foreign.member}, not to the request's subject ${subject}`,
    };
  }
  const allowed = new Map(bundle.map((m) => [keyOf(m), m]));
  for (const [index, change] of changes.entries()) {
    const at = `change ${index + 1} (${change.kind})`;
    const expected = operation === 'Activate' ? 'add_member' : 'remove_member';
    if (change.kind !== expected) {
      return { ok: false, message: `${at}: a scoped ${operation} may only contain ${expected} changes` };
    }
    const m = allowed.get(keyOf(change));
    if (m === undefined) {
      return {
        ok: false,
        message: `${at}: membership ${change.role} -> ${change.member} is not in the resolved bundle`,
      };
    }
    if (change.kind === 'add_member' && (change.admin || change.inherit !== m.inherit)) {
      return {
        ok: false,
        message: `${at}: membership ${change.role} -> ${change.member} must be granted with inherit ${String(m.inherit)} and without admin`,
      };
    }
  }
  return { ok: true };
}
