// Intermediate expansion items: one grant or default-privilege assertion with the path it came from, and
// merging of items into the desired graph's keyed, canonically sorted entries.

import type {
  DefaultPrivilegeEntry,
  DefaultPrivilegeScope,
  Ensure,
  GrantEntry,
  ObjectType,
  Privilege,
} from '../model/index.js';
import { canonicalPrivileges, compareDefaultKeys, compareGrantKeys } from '../canonical-order.js';

/** One expanded grant assertion, before merging by key. */
export interface GrantItem {
  readonly grantee: string;
  readonly object_type: ObjectType;
  readonly schema: string | null;
  readonly name: string | null;
  readonly privileges: readonly Privilege[];
  readonly ensure: Ensure;
  /** Path of the entry or template it came from. */
  readonly path: string;
}

/** One expanded default-privilege assertion, before merging by key. */
export interface DefaultItem {
  readonly owner: string;
  readonly scope: DefaultPrivilegeScope;
  readonly on_type: ObjectType;
  readonly grantee: string;
  readonly privileges: readonly Privilege[];
  readonly ensure: Ensure;
  readonly path: string;
}

/** Key text of a grant item: (grantee, type, schema, name). */
export function grantKey(item: Pick<GrantItem, 'grantee' | 'object_type' | 'schema' | 'name'>): string {
  return JSON.stringify([item.grantee, item.object_type, item.schema, item.name]);
}

/** Key text of the (grantee, type, schema) prefix that wildcards cover. */
export function grantPrefixKey(item: Pick<GrantItem, 'grantee' | 'object_type' | 'schema'>): string {
  return JSON.stringify([item.grantee, item.object_type, item.schema]);
}

/** Key text of a default-privilege item: (owner, scope, on_type, grantee). */
export function defaultKey(item: Pick<DefaultItem, 'owner' | 'scope' | 'on_type' | 'grantee'>): string {
  const scope = item.scope.type === 'global' ? null : item.scope.schema;
  return JSON.stringify([item.owner, scope, item.on_type, item.grantee]);
}

/** Merges grant items with the same key (privileges united) and sorts them canonically. */
export function mergeGrants(items: readonly GrantItem[]): readonly GrantEntry[] {
  const merged = new Map<string, { item: GrantItem; privileges: Privilege[] }>();
  for (const item of items) {
    const key = grantKey(item);
    const existing = merged.get(key);
    if (existing === undefined) merged.set(key, { item, privileges: [...item.privileges] });
    else existing.privileges.push(...item.privileges);
  }
  return [...merged.values()]
    .map(({ item, privileges }) => ({
      grantee: item.grantee,
      object_type: item.object_type,
      schema: item.schema,
      name: item.name,
      privileges: canonicalPrivileges(privileges),
    }))
    .sort(compareGrantKeys);
}

/** Merges default-privilege items with the same key and sorts them canonically. */
export function mergeDefaults(items: readonly DefaultItem[]): readonly DefaultPrivilegeEntry[] {
  const merged = new Map<string, { item: DefaultItem; privileges: Privilege[] }>();
  for (const item of items) {
    const key = defaultKey(item);
    const existing = merged.get(key);
    if (existing === undefined) merged.set(key, { item, privileges: [...item.privileges] });
    else existing.privileges.push(...item.privileges);
  }
  return [...merged.values()]
    .map(({ item, privileges }) => ({
      owner: item.owner,
      scope: item.scope,
      on_type: item.on_type,
      grantee: item.grantee,
      privileges: canonicalPrivileges(privileges),
    }))
    .sort(compareDefaultKeys);
}
