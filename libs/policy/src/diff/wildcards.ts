// Wildcard normalisation of the live side: per-object ACL rows folded into `*` keys where the policy has one.
// Makes a present `*` grant comparable with the catalog's per-object rows (engine notes 2.6, edge cases 10, 11).

import type { GrantEntry } from '../model/state.js';
import type { InventoryObject, UnsatisfiableWildcardGrant } from '../model/snapshot.js';
import type { Privilege } from '../model/vocabulary.js';
import { sameOrNull } from './grant-map.js';
import { grantKeyId, grantPrefixId, isWildcardable, WILDCARD } from './keys.js';
import { intersect, minus, union } from './privilege-set.js';

/** The normalised live grants plus, per prefix, the privileges a non-vacuous `*` key holds on every object. */
export interface NormalisedGrants {
  readonly grants: ReadonlyMap<string, GrantEntry>;
  /** prefix id -> privileges every inventory object holds (absent for vacuous or missing `*` keys). */
  readonly starCovered: ReadonlyMap<string, readonly Privilege[]>;
}

/**
 * For each desired present `*` grant: an empty inventory (or one whose objects the grantee all owns, as owners
 * hold every privilege implicitly) gets a vacuous `*` key equal to the desired set;
 * otherwise the intersection over ALL objects becomes the `*` key and is stripped from each object's row
 * (the residue stays per object), except privileges that `namedSelectors` (the policy's per-object grants and
 * absences) manage in the same scope without the `*` asserting them. Absence wildcards are never
 * normalised: their range scan needs the rows.
 */
export function normaliseWildcards(
  current: ReadonlyMap<string, GrantEntry>,
  desiredWildcards: readonly GrantEntry[],
  inventory: readonly InventoryObject[],
  namedSelectors: readonly GrantEntry[] = [],
): NormalisedGrants {
  const grants = new Map(current);
  const perObject = perObjectPrivileges(namedSelectors);
  const starCovered = new Map<string, readonly Privilege[]>();
  // Index once: per-wildcard scans of every row and every inventory object are quadratic at the bounds.
  const rowsByPrefix = new Map<string, GrantEntry[]>();
  for (const row of current.values()) {
    if (row.name === WILDCARD || row.name === null) continue;
    const id = grantPrefixId(row);
    const rows = rowsByPrefix.get(id);
    if (rows === undefined) rowsByPrefix.set(id, [row]);
    else rows.push(row);
  }
  const inventoryByScope = new Map<string, InventoryObject[]>();
  for (const object of inventory) {
    const id = JSON.stringify([object.kind, object.schema]);
    const objects = inventoryByScope.get(id);
    if (objects === undefined) inventoryByScope.set(id, [object]);
    else objects.push(object);
  }
  for (const wildcard of desiredWildcards) {
    if (wildcard.name !== WILDCARD || !isWildcardable(wildcard.object_type)) continue;
    const prefix = { grantee: wildcard.grantee, object_type: wildcard.object_type, schema: wildcard.schema };
    const rows = rowsByPrefix.get(grantPrefixId(prefix)) ?? [];
    const names = new Set<string>(rows.map((r) => r.name ?? ''));
    for (const object of inventoryByScope.get(JSON.stringify([wildcard.object_type, wildcard.schema])) ??
      []) {
      // An owner holds every privilege on its own objects implicitly (the catalog reports no owner rows),
      // so objects the grantee owns never leave a wildcard unsatisfied.
      if (object.owner === wildcard.grantee) names.delete(object.name);
      else names.add(object.name);
    }
    const starId = grantKeyId({ ...prefix, name: WILDCARD });
    const existingStar = grants.get(starId);
    if (names.size === 0) {
      grants.set(starId, {
        ...prefix,
        name: WILDCARD,
        privileges: union(existingStar?.privileges ?? [], wildcard.privileges),
        grantor: existingStar?.grantor ?? null,
      });
      continue;
    }
    let common: readonly Privilege[] | null = null;
    for (const name of names) {
      const held = grants.get(grantKeyId({ ...prefix, name }))?.privileges ?? [];
      common = common === null ? held : intersect(common, held);
    }
    // Privileges that named selectors manage per object (and the `*` does not assert) stay per object:
    // folded into `*`, the `*` convergence revoke would strip them and the named grant re-add them forever.
    const shared =
      common === null
        ? []
        : minus(common, minus(perObject.get(grantPrefixId(prefix)) ?? [], wildcard.privileges));
    if (shared.length === 0) continue;
    let grantor: string | null | undefined = undefined;
    for (const row of rows) {
      grantor = grantor === undefined ? (row.grantor ?? null) : sameOrNull(grantor, row.grantor);
      const rest = minus(row.privileges, shared);
      const id = grantKeyId(row);
      if (rest.length === 0) grants.delete(id);
      else grants.set(id, { ...row, privileges: rest });
    }
    grants.set(starId, {
      ...prefix,
      name: WILDCARD,
      privileges: union(existingStar?.privileges ?? [], shared),
      grantor: existingStar === undefined ? (grantor ?? null) : sameOrNull(existingStar.grantor, grantor),
    });
    starCovered.set(grantPrefixId(prefix), shared);
  }
  return { grants, starCovered };
}

/** prefix id -> privileges named (present or absent) by per-object selectors of the policy. */
function perObjectPrivileges(selectors: readonly GrantEntry[]): ReadonlyMap<string, readonly Privilege[]> {
  const out = new Map<string, readonly Privilege[]>();
  for (const s of selectors) {
    if (s.name === WILDCARD || s.name === null || !isWildcardable(s.object_type)) continue;
    const id = grantPrefixId(s);
    out.set(id, union(out.get(id) ?? [], s.privileges));
  }
  return out;
}

/** The blocker text for a present wildcard the executor cannot satisfy. */
export function unsatisfiableWildcardBlocker(u: UnsatisfiableWildcardGrant): string {
  const examples = u.examples.map((e) => `${u.schema}.${e.name} owned by ${e.owner}`).join(', ');
  return (
    `wildcard grant of ${u.privileges.join(', ')} on ${u.object_type} ${u.schema}.* to ${u.grantee} ` +
    `cannot be satisfied by executor ${u.executor}: ${u.count} objects not grantable` +
    (examples === '' ? '' : ` (${examples})`)
  );
}

/** Blockers for the snapshot's unsatisfiable wildcards that this policy's present wildcards ask for. */
export function wildcardBlockers(
  unsatisfiable: readonly UnsatisfiableWildcardGrant[],
  desiredWildcards: readonly GrantEntry[],
): readonly string[] {
  const out: string[] = [];
  for (const u of unsatisfiable) {
    const asked = desiredWildcards.some(
      (w) =>
        w.name === WILDCARD &&
        w.grantee === u.grantee &&
        w.object_type === u.object_type &&
        w.schema === u.schema &&
        intersect(w.privileges, u.privileges).length > 0,
    );
    if (asked) out.push(unsatisfiableWildcardBlocker(u));
  }
  return out;
}
