// deriveManagedScope: exactly what inspection must read for one policy, derived from its desired state.
// Inspection is never global: a role removed from the manifest is forgotten, only retirements are read undesired.

import { compareCodePoints } from '../canonical-order.js';
import {
  compareObjectTypes,
  PUBLIC_GRANTEE,
  type DefaultPrivilegeScopeKey,
  type DesiredState,
  type GrantEntry,
  type ManagedScope,
  type Privilege,
  type PublicObjectScope,
  type WildcardScope,
} from '../model/index.js';
import { canonicalPrivileges, compareDefaultScopes, compareGrantKeys } from '../canonical-order.js';

function sortedUnique(values: Iterable<string>): readonly string[] {
  return [...new Set(values)].sort(compareCodePoints);
}

function compareNullable(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareCodePoints(a, b);
}

/** The schema a grant target lives in: schema grants name it, relation-like grants carry it; databases have none. */
function grantSchema(grant: GrantEntry): string | null {
  return grant.object_type === 'schema' ? grant.name : grant.schema;
}

function wildcards(grants: readonly GrantEntry[]): readonly WildcardScope[] {
  return grants
    .filter(
      (g) =>
        g.name === '*' && g.object_type !== 'schema' && g.object_type !== 'database' && g.schema !== null,
    )
    .sort(compareGrantKeys)
    .map((g) => ({
      grantee: g.grantee,
      object_type: g.object_type,
      schema: g.schema!,
      privileges: g.privileges,
    }));
}

function publicObjects(grants: readonly GrantEntry[]): readonly PublicObjectScope[] {
  const merged = new Map<string, { scope: PublicObjectScope; privileges: Privilege[] }>();
  for (const g of grants) {
    if (g.grantee !== PUBLIC_GRANTEE) continue;
    const key = JSON.stringify([g.object_type, g.schema, g.name]);
    const entry = merged.get(key);
    if (entry === undefined) {
      merged.set(key, {
        scope: { object_type: g.object_type, schema: g.schema, name: g.name, privileges: [] },
        privileges: [...g.privileges],
      });
    } else entry.privileges.push(...g.privileges);
  }
  return [...merged.values()]
    .map(({ scope, privileges }) => ({ ...scope, privileges: canonicalPrivileges(privileges) }))
    .sort(
      (a, b) =>
        compareObjectTypes(a.object_type, b.object_type) ||
        compareNullable(a.schema, b.schema) ||
        compareNullable(a.name, b.name),
    );
}

function defaultScopes(desired: DesiredState): readonly DefaultPrivilegeScopeKey[] {
  const merged = new Map<string, { key: DefaultPrivilegeScopeKey; publicPrivileges: Privilege[] }>();
  for (const d of [...desired.default_privileges, ...desired.default_privilege_absences]) {
    const id = JSON.stringify([d.owner, d.scope.type === 'global' ? null : d.scope.schema, d.on_type]);
    let entry = merged.get(id);
    if (entry === undefined) {
      entry = {
        key: { owner: d.owner, scope: d.scope, on_type: d.on_type, public_privileges: [] },
        publicPrivileges: [],
      };
      merged.set(id, entry);
    }
    if (d.grantee === PUBLIC_GRANTEE) entry.publicPrivileges.push(...d.privileges);
  }
  return [...merged.values()]
    .map(({ key, publicPrivileges }) => ({
      ...key,
      public_privileges: canonicalPrivileges(publicPrivileges),
    }))
    .sort(
      (a, b) =>
        compareCodePoints(a.owner, b.owner) ||
        compareDefaultScopes(a.scope, b.scope) ||
        compareObjectTypes(a.on_type, b.on_type),
    );
}

/**
 * Derives the managed scope of a desired state (docs/catalog.md, "What it reads"): the roles, schemas, wildcard scopes,
 * PUBLIC targets and default-privilege patterns inspection reads, and nothing else.
 * @example deriveManagedScope(desired).roles // every declared role (generated, one-off, external) + retirements
 */
export function deriveManagedScope(desired: DesiredState): ManagedScope {
  const allGrants = [...desired.grants, ...desired.grant_absences];
  const allDefaults = [...desired.default_privileges, ...desired.default_privilege_absences];
  const databaseGrants = allGrants.filter((g) => g.object_type === 'database');
  const schemas = [
    ...desired.schemas.map((s) => s.name),
    ...allGrants.map(grantSchema).filter((s): s is string => s !== null),
    ...allDefaults.flatMap((d) => (d.scope.type === 'schema' ? [d.scope.schema] : [])),
  ];
  const functions = new Map<string, { schema: string; name: string }>();
  for (const g of allGrants) {
    if (g.object_type !== 'function' || g.name === null || g.name === '*' || g.schema === null) continue;
    functions.set(JSON.stringify([g.schema, g.name]), { schema: g.schema, name: g.name });
  }
  return {
    roles: sortedUnique([...desired.roles.map((r) => r.name), ...desired.retirements.map((r) => r.role)]),
    // An exclusive stanza with no members has no edges, yet its live members must be read to be revoked.
    membership_grantors: sortedUnique(
      [...desired.memberships.map((m) => m.role), ...desired.exclusive_membership_roles].filter((r) =>
        r.startsWith('pg_'),
      ),
    ),
    schemas: sortedUnique(schemas),
    owned_schemas: sortedUnique(desired.schemas.filter((s) => s.owner !== null).map((s) => s.name)),
    wildcards: wildcards(desired.grants),
    public_objects: publicObjects(allGrants),
    default_privilege_scopes: defaultScopes(desired),
    include_database_privileges: databaseGrants.length > 0,
    database_targets: sortedUnique(databaseGrants.map((g) => g.name).filter((n): n is string => n !== null)),
    function_signatures: [...functions.values()].sort(
      (a, b) => compareCodePoints(a.schema, b.schema) || compareCodePoints(a.name, b.name),
    ),
  };
}
