// The full diff of a desired state against a live snapshot, before mode filtering.
// Masks the snapshot to this policy's scope first, so one union read can serve several policies.

import type { Change } from '../model/change.js';
import type { DesiredState } from '../model/desired.js';
import type { CatalogSnapshot, InventoryObject } from '../model/snapshot.js';
import type { MembershipEdge, RoleEntry, SchemaEntry } from '../model/state.js';
import { PUBLIC_GRANTEE, type Privilege } from '../model/vocabulary.js';
import { grantKeyId, WILDCARD } from './keys.js';
import { diffDefaultPrivileges } from './diff-defaults.js';
import { diffGrants } from './diff-grants.js';
import { diffMemberships } from './diff-memberships.js';
import { diffRoles } from './diff-roles.js';
import { diffSchemas } from './diff-schemas.js';
import { resolveFunctionGrants } from './function-signatures.js';
import { defaultPrivilegeMap, grantMap, type GrantMap } from './grant-map.js';
import { unmanagedRoles } from './unmanaged.js';
import { retirementChanges } from './retirements.js';
import { normaliseWildcards, wildcardBlockers } from './wildcards.js';

/** (owner, schema, s) grant key id -> owner privileges, for schemas whose owner this plan keeps. */
function ownerHeldPrivileges(
  schemas: ReadonlyMap<string, SchemaEntry>,
  incomingOwners: ReadonlyMap<string, string>,
): ReadonlyMap<string, readonly Privilege[]> {
  const held = new Map<string, readonly Privilege[]>();
  for (const s of schemas.values()) {
    if (s.owner === null || incomingOwners.has(s.name)) continue;
    held.set(
      grantKeyId({ grantee: s.owner, object_type: 'schema', schema: null, name: s.name }),
      s.owner_privileges,
    );
  }
  return held;
}

/**
 * Declared per-object grants to the object's owner (owner known from the inventory) -> the declared
 * privileges: an owner holds every privilege on its own objects implicitly and the catalog reports no
 * owner rows, so without this the grant was re-issued on every plan.
 */
function objectOwnerHeldPrivileges(
  desired: GrantMap,
  inventory: readonly InventoryObject[],
): ReadonlyMap<string, readonly Privilege[]> {
  const owners = new Map(inventory.map((o) => [JSON.stringify([o.kind, o.schema, o.name]), o.owner]));
  const held = new Map<string, readonly Privilege[]>();
  for (const [id, want] of desired) {
    if (want.name === null || want.name === WILDCARD || want.schema === null) continue;
    if (owners.get(JSON.stringify([want.object_type, want.schema, want.name])) === want.grantee)
      held.set(id, want.privileges);
  }
  return held;
}

/** Diff options. */
export interface DiffOptions {
  /**
   * False when the mode will drop owner transfers (additive): the current owner then keeps owning,
   * so its own schema privileges satisfy a declared grant to it. Defaults to true.
   */
  readonly ownerTransfersApply?: boolean;
}

/** The unfiltered diff: every change kind, in bucket order, plus conditions that block the plan. */
export interface DiffResult {
  readonly changes: readonly Change[];
  readonly blockers: readonly string[];
}

/**
 * Diffs `desired` against `snapshot` (engine notes 3.2): roles, schemas, grants, default privileges,
 * memberships and retirement steps. Mode, unmanaged-role and password handling come after (plan/).
 */
export function diff(
  desired: DesiredState,
  snapshot: CatalogSnapshot,
  options: DiffOptions = {},
): DiffResult {
  const declared = new Set(desired.roles.map((r) => r.name));
  const retired = new Set(desired.retirements.map((r) => r.role));
  const managedRoles = new Set([...declared, ...retired]);

  const resolved = resolveFunctionGrants(
    desired.grants,
    desired.grant_absences,
    snapshot.function_signatures,
  );
  const desiredGrants = grantMap(resolved.grants);
  const absences = grantMap(resolved.absences);
  const desiredDefaults = defaultPrivilegeMap(desired.default_privileges);
  const defaultAbsences = defaultPrivilegeMap(desired.default_privilege_absences);

  const grantees = new Set<string>([...managedRoles, PUBLIC_GRANTEE]);
  for (const g of [...desiredGrants.values(), ...absences.values()]) grantees.add(g.grantee);
  for (const d of [...desiredDefaults.values(), ...defaultAbsences.values()]) grantees.add(d.grantee);

  const currentRoles = new Map<string, RoleEntry>();
  for (const r of snapshot.roles) if (managedRoles.has(r.name)) currentRoles.set(r.name, r);
  const desiredSchemaNames = new Set(desired.schemas.map((s) => s.name));
  const currentSchemas = new Map<string, SchemaEntry>();
  for (const s of snapshot.schemas) if (desiredSchemaNames.has(s.name)) currentSchemas.set(s.name, s);

  const desiredWildcards = [...desiredGrants.values()];
  const normalised = normaliseWildcards(
    grantMap(snapshot.grants.filter((g) => grantees.has(g.grantee))),
    desiredWildcards,
    snapshot.inventory,
    [...desiredGrants.values(), ...absences.values()],
  );
  const currentDefaults = defaultPrivilegeMap(
    snapshot.default_privileges.filter((d) => grantees.has(d.grantee)),
  );

  const existing = new Set([...snapshot.existing_roles, ...snapshot.roles.map((r) => r.name)]);
  const roles = diffRoles(desired.roles, currentRoles);
  const unmanaged = unmanagedRoles(desired);
  const ownersCreatedHere = new Set(roles.creates.map((c) => c.name).filter((n) => !unmanaged(n)));
  const schemas = diffSchemas(desired.schemas, currentSchemas);
  const grants = diffGrants({
    desired: desiredGrants,
    absences,
    current: normalised.grants,
    starCovered: normalised.starCovered,
    preserveGrantees: new Set(desired.roles.filter((r) => r.preserve_undeclared_grants).map((r) => r.name)),
    incomingOwners: schemas.incomingOwners,
    ownerHeld: new Map([
      ...ownerHeldPrivileges(
        currentSchemas,
        options.ownerTransfersApply === false ? new Map() : schemas.incomingOwners,
      ),
      ...objectOwnerHeldPrivileges(desiredGrants, snapshot.inventory),
    ]),
  });
  const defaults = diffDefaultPrivileges({
    desired: desiredDefaults,
    absences: defaultAbsences,
    current: currentDefaults,
    ownersCreatedHere,
  });
  const grantedRoles = new Set<string>([
    ...managedRoles,
    ...desired.memberships.map((m) => m.role),
    ...desired.exclusive_membership_roles,
  ]);
  const memberships = diffMemberships({
    desired: desired.memberships,
    current: snapshot.memberships.filter((m: MembershipEdge) => grantedRoles.has(m.role)),
    executorRole: snapshot.executor.role,
    serverVersionNum: snapshot.server_version_num,
  });

  const changes: Change[] = [
    ...roles.creates,
    ...schemas.creates,
    ...roles.alters,
    ...roles.comments,
    ...schemas.transfers,
    ...schemas.ownerPrivileges,
    ...grants.grants,
    ...defaults.sets,
    ...memberships.removes,
    ...memberships.adds,
    ...grants.revokes,
    ...defaults.revokes,
    ...retirementChanges(desired.retirements, existing),
  ];
  return {
    changes,
    blockers: [...resolved.blockers, ...wildcardBlockers(snapshot.unsatisfiable_wildcards, desiredWildcards)],
  };
}
