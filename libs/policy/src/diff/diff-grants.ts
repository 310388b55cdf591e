// Object-grant diff: grants for missing privileges, convergence and absence revokes merged per key.
// Implements PUBLIC-as-assertion, the shadow filter, `*` absence ranges, preserve_undeclared_grants
// and owner-transfer suppression (engine notes 3.2, 3.6).

import type { ChangeOf } from '../model/change.js';
import type { GrantEntry } from '../model/state.js';
import type { Privilege } from '../model/vocabulary.js';
import { sameOrNull, type GrantMap } from './grant-map.js';
import { grantKeyId, grantPrefixId, isPublic, isWildcardable, WILDCARD } from './keys.js';
import { compareGrantKeys } from '../canonical-order.js';
import { intersect, minus, union } from './privilege-set.js';

/** Inputs of the grant diff, already keyed, merged and normalised. */
export interface GrantDiffInput {
  readonly desired: GrantMap;
  readonly absences: GrantMap;
  readonly current: GrantMap;
  /** prefix id -> privileges a normalised `*` key holds on every object. */
  readonly starCovered: ReadonlyMap<string, readonly Privilege[]>;
  /** Grantees whose undeclared grants are kept (`preserve_undeclared_grants`). */
  readonly preserveGrantees: ReadonlySet<string>;
  /** schema -> owner it is transferred to in this plan. */
  readonly incomingOwners: ReadonlyMap<string, string>;
  /**
   * grant key id of (owner, schema, s) -> the owner's own privileges on a schema it keeps owning.
   * The catalog folds an owner's schema grant into owner state, so a declared grant to the current
   * owner is satisfied by those privileges instead of being re-issued forever.
   */
  readonly ownerHeld: ReadonlyMap<string, readonly Privilege[]>;
}

type Revoke = ChangeOf<'revoke'>;
type Grant = ChangeOf<'grant'>;

/** Grants and revokes (one per key) that move the live grants to the desired ones. */
export function diffGrants(input: GrantDiffInput): { grants: readonly Grant[]; revokes: readonly Revoke[] } {
  const grants: Grant[] = [];
  const revokes = new Map<string, Revoke>();
  const addRevoke = (key: GrantEntry, privileges: readonly Privilege[], grantor: string | null): void => {
    if (privileges.length === 0) return;
    const id = grantKeyId(key);
    const seen = revokes.get(id);
    revokes.set(id, {
      kind: 'revoke',
      role: key.grantee,
      privileges: union(seen?.privileges ?? [], privileges),
      object_type: key.object_type,
      name: key.name,
      schema: key.schema,
      grantor: seen === undefined ? grantor : sameOrNull(seen.grantor, grantor),
    });
  };

  const shadow = wildcardShadow(input.desired, input.absences);
  const shadowed = (key: GrantEntry, privileges: readonly Privilege[]): readonly Privilege[] => {
    if (key.name === WILDCARD || key.name === null || !isWildcardable(key.object_type)) return privileges;
    return minus(privileges, shadow.get(grantPrefixId(key)) ?? []);
  };
  const convergenceRevokes = (grantee: string): boolean =>
    !isPublic(grantee) && !input.preserveGrantees.has(grantee);

  for (const [id, want] of input.desired) {
    const held = input.current.get(id);
    const owned = input.ownerHeld.get(id) ?? [];
    // A named key agreeing with a normalised `*` on a privilege holds it through the `*` key.
    const viaStar =
      want.name === WILDCARD || want.name === null ? [] : (input.starCovered.get(grantPrefixId(want)) ?? []);
    const missing = minus(want.privileges, union(union(held?.privileges ?? [], owned), viaStar));
    if (missing.length > 0) grants.push(grantChange(want, missing));
    if (held !== undefined && convergenceRevokes(want.grantee)) {
      addRevoke(held, shadowed(held, minus(held.privileges, want.privileges)), held.grantor ?? null);
    }
  }
  for (const [id, held] of input.current) {
    if (input.desired.has(id) || !convergenceRevokes(held.grantee)) continue;
    addRevoke(held, shadowed(held, held.privileges), held.grantor ?? null);
  }
  for (const absent of input.absences.values()) {
    if (absent.name === WILDCARD && isWildcardable(absent.object_type)) {
      const prefix = grantPrefixId(absent);
      let held: readonly Privilege[] = [];
      let grantor: string | null | undefined = undefined;
      for (const row of input.current.values()) {
        if (grantPrefixId(row) !== prefix || intersect(row.privileges, absent.privileges).length === 0)
          continue;
        held = union(held, row.privileges);
        grantor = grantor === undefined ? (row.grantor ?? null) : sameOrNull(grantor, row.grantor);
      }
      addRevoke(absent, intersect(absent.privileges, held), grantor ?? null);
      continue;
    }
    const row = input.current.get(grantKeyId(absent));
    const viaStar = absent.name === null ? [] : (input.starCovered.get(grantPrefixId(absent)) ?? []);
    const held = union(row?.privileges ?? [], viaStar);
    addRevoke(absent, intersect(absent.privileges, held), row?.grantor ?? null);
  }

  const kept = [...revokes.values()].filter(
    (r) => !(r.object_type === 'schema' && r.name !== null && input.incomingOwners.get(r.name) === r.role),
  );
  return { grants: grants.sort(compareGrantChanges), revokes: kept.sort(compareGrantChanges) };
}

/** prefix id -> privileges a desired present or absent `*` covers (per-object revokes of these are skipped). */
function wildcardShadow(desired: GrantMap, absences: GrantMap): ReadonlyMap<string, readonly Privilege[]> {
  const shadow = new Map<string, readonly Privilege[]>();
  for (const entry of [...desired.values(), ...absences.values()]) {
    if (entry.name !== WILDCARD || !isWildcardable(entry.object_type)) continue;
    const id = grantPrefixId(entry);
    shadow.set(id, union(shadow.get(id) ?? [], entry.privileges));
  }
  return shadow;
}

function grantChange(key: GrantEntry, privileges: readonly Privilege[]): Grant {
  return {
    kind: 'grant',
    role: key.grantee,
    privileges,
    object_type: key.object_type,
    name: key.name,
    schema: key.schema,
  };
}

function compareGrantChanges(a: Grant | Revoke, b: Grant | Revoke): number {
  return compareGrantKeys(
    { grantee: a.role, object_type: a.object_type, schema: a.schema, name: a.name },
    { grantee: b.role, object_type: b.object_type, schema: b.schema, name: b.name },
  );
}
