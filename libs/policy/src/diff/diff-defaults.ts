// Default-privilege diff: the grant logic over (owner, scope, on_type, grantee) keys, without wildcards.
// PUBLIC is exempt from convergence revokes; absences of built-in PUBLIC defaults of new owners still land.

import type { Change } from '../model/change.js';
import type { DefaultPrivilegeEntry } from '../model/state.js';
import type { ObjectType, Privilege } from '../model/vocabulary.js';
import type { DefaultPrivilegeMap } from './grant-map.js';
import { defaultKeyId, isPublic } from './keys.js';
import { compareDefaultKeys } from '../canonical-order.js';
import { intersect, minus, union } from './privilege-set.js';

/** PostgreSQL's built-in global PUBLIC defaults (acldefault): EXECUTE on routines, USAGE on types. */
export function builtInPublicDefaults(onType: ObjectType): readonly Privilege[] {
  if (onType === 'function') return ['EXECUTE'];
  if (onType === 'type') return ['USAGE'];
  return [];
}

/** Inputs of the default-privilege diff. */
export interface DefaultPrivilegeDiffInput {
  readonly desired: DefaultPrivilegeMap;
  readonly absences: DefaultPrivilegeMap;
  readonly current: DefaultPrivilegeMap;
  /** Owners that do not exist yet and are created by this plan. */
  readonly ownersCreatedHere: ReadonlySet<string>;
}

/** set_default_privilege / revoke_default_privilege (one union member in the model). */
export type DefaultPrivilegeChange = Extract<
  Change,
  { readonly kind: 'set_default_privilege' | 'revoke_default_privilege' }
>;
type SetDefault = DefaultPrivilegeChange;

/** set_default_privilege and revoke_default_privilege changes (revokes merged per key). */
export function diffDefaultPrivileges(input: DefaultPrivilegeDiffInput): {
  sets: readonly SetDefault[];
  revokes: readonly SetDefault[];
} {
  const sets: SetDefault[] = [];
  const revokes = new Map<string, SetDefault>();
  const addRevoke = (key: DefaultPrivilegeEntry, privileges: readonly Privilege[]): void => {
    if (privileges.length === 0) return;
    const id = defaultKeyId(key);
    const seen = revokes.get(id);
    revokes.set(id, change('revoke_default_privilege', key, union(seen?.privileges ?? [], privileges)));
  };
  for (const [id, want] of input.desired) {
    const held = input.current.get(id);
    const missing = minus(want.privileges, held?.privileges ?? []);
    if (missing.length > 0) sets.push(change('set_default_privilege', want, missing));
    if (held !== undefined && !isPublic(want.grantee))
      addRevoke(held, minus(held.privileges, want.privileges));
  }
  for (const [id, held] of input.current) {
    if (input.desired.has(id) || isPublic(held.grantee)) continue;
    addRevoke(held, held.privileges);
  }
  for (const [id, absent] of input.absences) {
    const row = input.current.get(id);
    const builtIn =
      row === undefined &&
      isPublic(absent.grantee) &&
      absent.scope.type === 'global' &&
      input.ownersCreatedHere.has(absent.owner)
        ? builtInPublicDefaults(absent.on_type)
        : [];
    addRevoke(absent, intersect(absent.privileges, union(row?.privileges ?? [], builtIn)));
  }
  return { sets: sets.sort(compareDefaultKeys), revokes: [...revokes.values()].sort(compareDefaultKeys) };
}

function change(
  kind: SetDefault['kind'],
  key: DefaultPrivilegeEntry,
  privileges: readonly Privilege[],
): SetDefault {
  return { kind, owner: key.owner, scope: key.scope, on_type: key.on_type, grantee: key.grantee, privileges };
}
