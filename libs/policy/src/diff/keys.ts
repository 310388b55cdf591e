// Keys for the diff's maps: grants, default privileges, memberships. Their order is the canonical order
// (canonical-order.ts): PUBLIC before every role and null before every string, total and stable.

import type {
  DefaultPrivilegeEntry,
  DefaultPrivilegeScope,
  GrantTarget,
  MembershipEdge,
} from '../model/state.js';
import { PUBLIC_GRANTEE, type Grantee, type ObjectType } from '../model/vocabulary.js';

/** The name that means "every object of the type in the schema". */
export const WILDCARD = '*';

/** Object types a `*` name can expand over (schema and database targets have no wildcard). */
export function isWildcardable(type: ObjectType): boolean {
  return type !== 'schema' && type !== 'database';
}

/** True for the PUBLIC pseudo-role. */
export function isPublic(grantee: Grantee): boolean {
  return grantee === PUBLIC_GRANTEE;
}

/** True for predefined roles (`pg_` prefix), which the engine never creates, alters or drops. */
export function isPredefinedRole(role: string): boolean {
  return role.startsWith('pg_');
}

/** A grant key: (grantee, type, schema, name); name last so a prefix range covers a wildcard scope. */
export interface GrantKey extends GrantTarget {
  readonly grantee: Grantee;
}

/**
 * Joins key parts into one injective map key: NUL separates parts (PostgreSQL names cannot contain NUL),
 * a present part starts with U+0001 and null is empty. Cheaper than JSON at the spec's bounds.
 */
export function keyId(...parts: readonly (string | null)[]): string {
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    out += (i === 0 ? '' : '\u0000') + (part === null || part === undefined ? '' : '\u0001' + part);
  }
  return out;
}

/** Map key of a grant key. */
export function grantKeyId(k: GrantKey): string {
  return keyId(k.grantee, k.object_type, k.schema, k.name);
}

/** Map key of a (grantee, type, schema) prefix: the range a `*` covers. */
export function grantPrefixId(k: Omit<GrantKey, 'name'>): string {
  return keyId(k.grantee, k.object_type, k.schema);
}

/** A default-privilege key: (owner, scope, on_type, grantee). */
export type DefaultPrivilegeKey = Omit<DefaultPrivilegeEntry, 'privileges'>;

/** The schema of a scope, or null for global. */
export function scopeSchema(scope: DefaultPrivilegeScope): string | null {
  return scope.type === 'schema' ? scope.schema : null;
}

/** Map key of a default-privilege key. */
export function defaultKeyId(k: DefaultPrivilegeKey): string {
  return keyId(k.owner, scopeSchema(k.scope), k.on_type, k.grantee);
}

/** Map key of a membership edge. */
export function membershipKeyId(e: Pick<MembershipEdge, 'role' | 'member'>): string {
  return keyId(e.role, e.member);
}
