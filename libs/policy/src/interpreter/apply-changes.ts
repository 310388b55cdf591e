// A small interpreter: what PostgreSQL does to the inspected state when a plan's changes run.
// Used by the property tests (convergence oracle) and for the review artifact's simulated graph.

import type { Change, ChangeOf, RoleAttribute } from '../model/change.js';
import type { CatalogSnapshot } from '../model/snapshot.js';
import type {
  DefaultPrivilegeEntry,
  GrantEntry,
  MembershipEdge,
  RoleState,
  SchemaEntry,
} from '../model/state.js';
import type { Privilege } from '../model/vocabulary.js';
import { PUBLIC_GRANTEE } from '../model/vocabulary.js';
import { compareCodePoints } from '../canonical-order.js';
import { builtInPublicDefaults } from '../diff/diff-defaults.js';
import { defaultPrivilegeMap, grantMap, sortedDefaults, sortedGrants } from '../diff/grant-map.js';
import { defaultKeyId, grantKeyId, grantPrefixId, isWildcardable, WILDCARD } from '../diff/keys.js';
import { compareMembershipKeys } from '../canonical-order.js';
import { minus, union } from '../diff/privilege-set.js';

interface State {
  roles: Map<string, RoleState>;
  existing: Set<string>;
  schemas: Map<string, SchemaEntry>;
  grants: Map<string, GrantEntry>;
  defaults: Map<string, DefaultPrivilegeEntry>;
  memberships: MembershipEdge[];
  /** Inventory names per `kind NUL schema`, built on first use: wildcard grants would scan it each time. */
  inventory: Map<string, string[]> | null;
}

/**
 * Applies `changes` in order to `snapshot` and returns the resulting snapshot (canonically sorted).
 * Models: `*` grants expand per inventory object and `*` revokes hit every row under the prefix;
 * an owner transfer folds the new owner's explicit schema grant into the owner's privileges;
 * a new role gets PostgreSQL's built-in global PUBLIC defaults and, on PG16+ with a non-superuser
 * executor, the implicit CREATEROLE self-grant edge; emptied keys are deleted.
 */
export function applyChanges(snapshot: CatalogSnapshot, changes: readonly Change[]): CatalogSnapshot {
  const state: State = {
    roles: new Map(snapshot.roles.map((r) => [r.name, r.state])),
    existing: new Set([...snapshot.existing_roles, ...snapshot.roles.map((r) => r.name)]),
    schemas: new Map(snapshot.schemas.map((s) => [s.name, s])),
    grants: grantMap(snapshot.grants),
    defaults: defaultPrivilegeMap(snapshot.default_privileges),
    memberships: [...snapshot.memberships],
    inventory: null,
  };
  for (const change of changes) applyOne(state, change, snapshot);
  return {
    ...snapshot,
    roles: [...state.roles]
      .map(([name, s]) => ({ name, state: s }))
      .sort((a, b) => compareCodePoints(a.name, b.name)),
    existing_roles: [...state.existing].sort(compareCodePoints),
    schemas: [...state.schemas.values()].sort((a, b) => compareCodePoints(a.name, b.name)),
    grants: sortedGrants(state.grants),
    default_privileges: sortedDefaults(state.defaults),
    memberships: pg15Inheritance(state, snapshot).sort(compareMembershipKeys),
  };
}

/**
 * Before PostgreSQL 16 an edge's inherit is its member's rolinherit (no per-edge option), so an
 * ALTER ROLE ... [NO]INHERIT changes every edge of that member and a GRANT cannot set it.
 */
function pg15Inheritance(state: State, snapshot: CatalogSnapshot): MembershipEdge[] {
  if (snapshot.server_version_num >= 160000) return [...state.memberships];
  return state.memberships.map((edge) => {
    const member = state.roles.get(edge.member);
    return member === undefined ? edge : { ...edge, inherit: member.inherit };
  });
}

function applyOne(state: State, change: Change, snapshot: CatalogSnapshot): void {
  switch (change.kind) {
    case 'create_role':
      return createRole(state, change);
    case 'create_schema': {
      const owner = change.owner ?? snapshot.executor.role;
      state.schemas.set(change.name, { name: change.name, owner, owner_privileges: ['CREATE', 'USAGE'] });
      return;
    }
    case 'alter_schema_owner':
      return transferSchema(state, change.name, change.owner);
    case 'ensure_schema_owner_privileges': {
      const schema = state.schemas.get(change.name);
      if (schema !== undefined && schema.owner === change.owner) {
        state.schemas.set(change.name, {
          ...schema,
          owner_privileges: union(schema.owner_privileges, change.privileges),
        });
      }
      return;
    }
    case 'alter_role': {
      const role = state.roles.get(change.name);
      if (role !== undefined) state.roles.set(change.name, change.attributes.reduce(applyAttribute, role));
      return;
    }
    case 'set_comment': {
      const role = state.roles.get(change.name);
      if (role !== undefined) state.roles.set(change.name, { ...role, comment: change.comment });
      return;
    }
    case 'grant':
      return grant(state, change, snapshot);
    case 'revoke':
      return revoke(state, change);
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      return applyDefault(state, change);
    case 'add_member':
      state.memberships = state.memberships.filter(
        (e) => e.role !== change.role || e.member !== change.member,
      );
      state.memberships.push({
        role: change.role,
        member: change.member,
        inherit: change.inherit,
        admin: change.admin,
        grantor: null,
      });
      return;
    case 'remove_member':
      // REVOKE ... GRANTED BY g removes only g's row (PG16+); PG15 rows carry no grantor.
      state.memberships = state.memberships.filter(
        (e) => e.role !== change.role || e.member !== change.member || (e.grantor ?? null) !== change.grantor,
      );
      return;
    case 'reassign_owned':
      for (const schema of [...state.schemas.values()]) {
        if (schema.owner === change.from_role)
          state.schemas.set(schema.name, { ...schema, owner: change.to_role });
      }
      return;
    case 'drop_owned':
      for (const schema of [...state.schemas.values()])
        if (schema.owner === change.role) state.schemas.delete(schema.name);
      for (const [id, g] of state.grants) if (g.grantee === change.role) state.grants.delete(id);
      for (const [id, d] of state.defaults)
        if (d.owner === change.role || d.grantee === change.role) state.defaults.delete(id);
      return;
    case 'terminate_sessions':
    case 'set_password':
      return;
    case 'drop_role':
      return dropRole(state, change.name);
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** ALTER DEFAULT PRIVILEGES: the entry's privileges grow or shrink; an empty entry is gone. */
function applyDefault(
  state: State,
  change: ChangeOf<'set_default_privilege' | 'revoke_default_privilege'>,
): void {
  const id = defaultKeyId(change);
  const held = state.defaults.get(id)?.privileges ?? [];
  const next =
    change.kind === 'set_default_privilege' ? union(held, change.privileges) : minus(held, change.privileges);
  const entry = {
    owner: change.owner,
    scope: change.scope,
    on_type: change.on_type,
    grantee: change.grantee,
  };
  if (next.length === 0) state.defaults.delete(id);
  else state.defaults.set(id, { ...entry, privileges: next });
}

/** DROP ROLE: the role, its grants, the defaults it owns or receives, and its memberships either way. */
function dropRole(state: State, name: string): void {
  state.roles.delete(name);
  state.existing.delete(name);
  for (const [id, g] of state.grants) if (g.grantee === name) state.grants.delete(id);
  for (const [id, d] of state.defaults) if (d.owner === name || d.grantee === name) state.defaults.delete(id);
  state.memberships = state.memberships.filter((e) => e.role !== name && e.member !== name);
}

function createRole(state: State, change: ChangeOf<'create_role'>): void {
  const { state: s } = change;
  state.roles.set(change.name, { ...s, config: {} });
  state.existing.add(change.name);
  for (const onType of ['function', 'type'] as const) {
    const entry = {
      owner: change.name,
      scope: { type: 'global' } as const,
      on_type: onType,
      grantee: PUBLIC_GRANTEE,
    };
    state.defaults.set(defaultKeyId(entry), { ...entry, privileges: builtInPublicDefaults(onType) });
  }
  // PG16+ also records an implicit edge (created role -> non-superuser executor, ADMIN, by the bootstrap
  // superuser). Inspection leaves it out as unmanaged (catalog deriveMemberships), so the predicted
  // snapshot does too; the PostgreSQL 16 and 18 convergence runs compare the two.
}

/** ALTER SCHEMA OWNER: the old owner's entry becomes the new owner's, merged with its explicit grant. */
function transferSchema(state: State, name: string, owner: string): void {
  const schema = state.schemas.get(name);
  if (schema === undefined) return;
  const explicitId = grantKeyId({ grantee: owner, object_type: 'schema', schema: null, name });
  const explicit = state.grants.get(explicitId)?.privileges ?? [];
  state.grants.delete(explicitId);
  state.schemas.set(name, { name, owner, owner_privileges: union(schema.owner_privileges, explicit) });
}

function grant(state: State, change: ChangeOf<'grant'>, snapshot: CatalogSnapshot): void {
  if (change.object_type === 'schema' && change.name !== null) {
    const schema = state.schemas.get(change.name);
    if (schema !== undefined && schema.owner === change.role) {
      state.schemas.set(change.name, {
        ...schema,
        owner_privileges: union(schema.owner_privileges, change.privileges),
      });
      return;
    }
  }
  const key = { grantee: change.role, object_type: change.object_type, schema: change.schema };
  const names =
    change.name === WILDCARD && isWildcardable(change.object_type)
      ? (inventoryOf(state, snapshot).get(`${change.object_type}\u0000${change.schema ?? ''}`) ?? [])
      : [change.name];
  for (const name of names) addPrivileges(state, { ...key, name }, change.privileges);
}

function inventoryOf(state: State, snapshot: CatalogSnapshot): Map<string, string[]> {
  if (state.inventory === null) {
    state.inventory = new Map();
    for (const o of snapshot.inventory) {
      const key = `${o.kind}\u0000${o.schema}`;
      const names = state.inventory.get(key);
      if (names === undefined) state.inventory.set(key, [o.name]);
      else names.push(o.name);
    }
  }
  return state.inventory;
}

function revoke(state: State, change: ChangeOf<'revoke'>): void {
  if (change.object_type === 'schema' && change.name !== null) {
    const schema = state.schemas.get(change.name);
    if (schema !== undefined && schema.owner === change.role) {
      state.schemas.set(change.name, {
        ...schema,
        owner_privileges: minus(schema.owner_privileges, change.privileges),
      });
      return;
    }
  }
  const key = {
    grantee: change.role,
    object_type: change.object_type,
    schema: change.schema,
    name: change.name,
  };
  const all = change.name === WILDCARD && isWildcardable(change.object_type);
  // A named revoke touches one key: look it up instead of scanning every row (plans revoke thousands).
  const ids = all
    ? [...state.grants.keys()].filter((id) => grantPrefixId(state.grants.get(id)!) === grantPrefixId(key))
    : [grantKeyId(key)];
  for (const id of ids) {
    const row = state.grants.get(id);
    if (row === undefined) continue;
    const rest = minus(row.privileges, change.privileges);
    if (rest.length === 0) state.grants.delete(id);
    else state.grants.set(id, { ...row, privileges: rest });
  }
}

function addPrivileges(
  state: State,
  key: Omit<GrantEntry, 'privileges'>,
  privileges: readonly Privilege[],
): void {
  const id = grantKeyId(key);
  const held = state.grants.get(id);
  state.grants.set(id, {
    ...key,
    grantor: held?.grantor ?? null,
    privileges: union(held?.privileges ?? [], privileges),
  });
}

function applyAttribute(role: RoleState, attribute: RoleAttribute): RoleState {
  switch (attribute.kind) {
    case 'set_config':
      return { ...role, config: { ...role.config, [attribute.parameter]: attribute.value } };
    case 'reset_config': {
      const config = { ...role.config };
      delete config[attribute.parameter];
      return { ...role, config };
    }
    case 'valid_until':
      return { ...role, password_valid_until: attribute.value };
    case 'connection_limit':
      return { ...role, connection_limit: attribute.value };
    default:
      return { ...role, [attribute.kind]: attribute.value };
  }
}
