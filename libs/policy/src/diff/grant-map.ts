// Keyed, merged views of grant and default-privilege lists (entries with one key merge their privileges).
// Both the desired and the live side go through these, so duplicate rows can never produce duplicate changes.

import type { DefaultPrivilegeEntry, GrantEntry } from '../model/state.js';
import { defaultKeyId, grantKeyId } from './keys.js';
import { compareDefaultKeys, compareGrantKeys } from '../canonical-order.js';
import { union } from './privilege-set.js';

/** Grants keyed by `grantKeyId`. */
export type GrantMap = ReadonlyMap<string, GrantEntry>;

/** Default privileges keyed by `defaultKeyId`. */
export type DefaultPrivilegeMap = ReadonlyMap<string, DefaultPrivilegeEntry>;

/**
 * Merges grant rows per key. The grantor survives only when every merged row names the same one,
 * because a revoke can carry a single GRANTED BY. The merge is order-independent (union, and a grantor
 * kept only when all rows agree), so rows are not sorted here; consumers sort what they emit.
 */
export function grantMap(entries: readonly GrantEntry[]): Map<string, GrantEntry> {
  const map = new Map<string, GrantEntry>();
  for (const entry of entries) {
    const id = grantKeyId(entry);
    const seen = map.get(id);
    const normalised: GrantEntry = {
      grantee: entry.grantee,
      object_type: entry.object_type,
      schema: entry.schema,
      name: entry.name,
      privileges: union(seen?.privileges ?? [], entry.privileges),
      grantor: seen === undefined ? (entry.grantor ?? null) : sameOrNull(seen.grantor, entry.grantor),
    };
    map.set(id, normalised);
  }
  return map;
}

/** Merges default-privilege rows per key. */
export function defaultPrivilegeMap(
  entries: readonly DefaultPrivilegeEntry[],
): Map<string, DefaultPrivilegeEntry> {
  const map = new Map<string, DefaultPrivilegeEntry>();
  for (const entry of entries) {
    const id = defaultKeyId(entry);
    const seen = map.get(id);
    map.set(id, { ...entry, privileges: union(seen?.privileges ?? [], entry.privileges) });
  }
  return map;
}

/** Returns the shared grantor of two rows, or null when they differ or one is unknown. */
export function sameOrNull(a: string | null | undefined, b: string | null | undefined): string | null {
  return a !== undefined && a !== null && a === b ? a : null;
}

/** Values of a keyed map in key order. */
export function sortedGrants(map: GrantMap): readonly GrantEntry[] {
  return [...map.values()].sort(compareGrantKeys);
}

/** Values of a keyed map in key order. */
export function sortedDefaults(map: DefaultPrivilegeMap): readonly DefaultPrivilegeEntry[] {
  return [...map.values()].sort(compareDefaultKeys);
}
