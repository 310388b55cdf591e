// Collapses per-object grants to `*` where every object of a kind in a schema carries the same grant to
// the same role (objects the role owns count as matching: owners hold every privilege implicitly).

import { isWildcardable, keyId, WILDCARD } from '../diff/keys.js';
import { compareGrantKeys } from '../canonical-order.js';
import type { InventoryObject } from '../model/snapshot.js';
import type { GrantEntry } from '../model/state.js';

function samePrivileges(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}

/**
 * Returns the grants with every collapsible (grantee, type, schema) group replaced by one `*` entry,
 * canonically ordered (grantee, type, schema, name), and how many `*` entries were made.
 */
export function collapseGrants(
  grants: readonly GrantEntry[],
  inventory: readonly InventoryObject[],
): { grants: GrantEntry[]; collapsed: number } {
  const objects = new Map<string, InventoryObject[]>();
  for (const object of inventory) {
    const id = keyId(object.kind, object.schema);
    const list = objects.get(id);
    if (list === undefined) objects.set(id, [object]);
    else list.push(object);
  }
  const groups = new Map<string, GrantEntry[]>();
  const out: GrantEntry[] = [];
  for (const grant of grants) {
    if (!isWildcardable(grant.object_type) || grant.schema === null || grant.name === WILDCARD) {
      out.push(grant);
      continue;
    }
    const id = keyId(grant.grantee, grant.object_type, grant.schema);
    const list = groups.get(id);
    if (list === undefined) groups.set(id, [grant]);
    else list.push(grant);
  }
  let collapsed = 0;
  for (const group of groups.values()) {
    const first = group[0]!;
    const privileges = [...first.privileges].sort();
    const granted = new Set(group.map((grant) => grant.name));
    const eligible = (objects.get(keyId(first.object_type, first.schema)) ?? []).filter(
      (object) => object.owner !== first.grantee,
    );
    const uniform =
      eligible.length > 0 &&
      eligible.length === group.length &&
      eligible.every((object) => granted.has(object.name)) &&
      group.every((grant) => samePrivileges([...grant.privileges].sort(), privileges));
    if (!uniform) {
      out.push(...group);
      continue;
    }
    collapsed += 1;
    out.push({
      object_type: first.object_type,
      schema: first.schema,
      name: WILDCARD,
      grantee: first.grantee,
      privileges: first.privileges,
    });
  }
  return { grants: out.sort(compareGrantKeys), collapsed };
}
