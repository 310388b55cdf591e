// The canonical orders of the desired graph's entries (the same keys the diff uses), built on the one string
// comparator (code points) and the vocabularies' orders, so every consumer sees identical, stable lists.

import { compareCodePoints } from '../canonical-order.js';
import {
  compareObjectTypes,
  comparePrivileges,
  PUBLIC_GRANTEE,
  type DefaultPrivilegeEntry,
  type DefaultPrivilegeScope,
  type GrantTarget,
  type MembershipEdge,
  type Privilege,
} from '../model/index.js';

/** PUBLIC sorts before every role; roles by code point. */
export function compareGrantees(a: string, b: string): number {
  if (a === b) return 0;
  if (a === PUBLIC_GRANTEE) return -1;
  if (b === PUBLIC_GRANTEE) return 1;
  return compareCodePoints(a, b);
}

/** Null sorts first (as an absent Option does), then code points. */
export function compareNullableStrings(a: string | null, b: string | null): number {
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
    compareNullableStrings(a.schema, b.schema) ||
    compareNullableStrings(a.name, b.name)
  );
}

/** Global scope first, then schema scopes by name. */
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
export function compareMembershipKeys(a: MembershipEdge, b: MembershipEdge): number {
  return compareCodePoints(a.role, b.role) || compareCodePoints(a.member, b.member);
}

/** De-duplicates and sorts privileges canonically. */
export function canonicalPrivileges(privileges: Iterable<Privilege>): readonly Privilege[] {
  return [...new Set(privileges)].sort(comparePrivileges);
}
