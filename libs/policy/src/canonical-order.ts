// The canonical order, once: one string order for everything the engine sorts (SQL order, digests, graph
// ids), and the order of the desired graph's entries by their keys (the diff's keys), which the expansion,
// the diff, the managed scope and the digests all sort by. JavaScript's default sort compares UTF-16 code
// units, which misorders astral characters; code-point order equals UTF-8 byte order, which is what the
// digests and renderer rely on.
import {
  compareObjectTypes,
  comparePrivileges,
  PUBLIC_GRANTEE,
  type DefaultPrivilegeEntry,
  type DefaultPrivilegeScope,
  type GrantTarget,
  type MembershipEdge,
  type Privilege,
} from './model/index.js';

function isSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** Reference comparison over whole code points (used only from the first surrogate difference on). */
function compareFromCodePoints(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const x = left[i]!.codePointAt(0)!;
    const y = right[i]!.codePointAt(0)!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return left.length - right.length;
}

/**
 * Compares two strings by Unicode code point (equivalently by UTF-8 bytes).
 * Walks UTF-16 units without allocating (sorting thousands of keys is hot); only when the first difference
 * involves a surrogate does it fall back to whole code points from the last shared boundary.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (!isSurrogate(x) && !isSurrogate(y)) return x < y ? -1 : 1;
    // A shared high surrogate just before i pairs differently in the two strings: restart there.
    const start = i > 0 && isHighSurrogate(a.charCodeAt(i - 1)) ? i - 1 : i;
    return compareFromCodePoints(a.slice(start), b.slice(start));
  }
  return a.length - b.length;
}

/** Orders grantees: PUBLIC first, then by code point. */
export function compareGrantees(a: string, b: string): number {
  if (a === b) return 0;
  if (a === PUBLIC_GRANTEE) return -1;
  if (b === PUBLIC_GRANTEE) return 1;
  return compareCodePoints(a, b);
}

/** Orders nullable strings: null first (as an absent Option does), then by code point. */
export function compareNullable(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareCodePoints(a, b);
}

/** Grant key order: grantee, object type, schema, name (name last so a (grantee, type, schema) prefix is contiguous). */
export function compareGrantKeys(
  a: GrantTarget & { readonly grantee: string },
  b: GrantTarget & { readonly grantee: string },
): number {
  return (
    compareGrantees(a.grantee, b.grantee) ||
    compareObjectTypes(a.object_type, b.object_type) ||
    compareNullable(a.schema, b.schema) ||
    compareNullable(a.name, b.name)
  );
}

/** Orders default-privilege scopes: global first, then schema scopes by name. */
export function compareDefaultScopes(a: DefaultPrivilegeScope, b: DefaultPrivilegeScope): number {
  if (a.type === 'global') return b.type === 'global' ? 0 : -1;
  if (b.type === 'global') return 1;
  return compareCodePoints(a.schema, b.schema);
}

/** Default-privilege key order: owner, scope, on_type, grantee. */
export function compareDefaultKeys(
  a: Omit<DefaultPrivilegeEntry, 'privileges'>,
  b: Omit<DefaultPrivilegeEntry, 'privileges'>,
): number {
  return (
    compareCodePoints(a.owner, b.owner) ||
    compareDefaultScopes(a.scope, b.scope) ||
    compareObjectTypes(a.on_type, b.on_type) ||
    compareGrantees(a.grantee, b.grantee)
  );
}

/** Membership edge order: granted role, then member. */
export function compareMembershipKeys(
  a: Pick<MembershipEdge, 'role' | 'member'>,
  b: Pick<MembershipEdge, 'role' | 'member'>,
): number {
  return compareCodePoints(a.role, b.role) || compareCodePoints(a.member, b.member);
}

/** De-duplicates and sorts privileges canonically. */
export function canonicalPrivileges(privileges: Iterable<Privilege>): readonly Privilege[] {
  return [...new Set(privileges)].sort(comparePrivileges);
}
