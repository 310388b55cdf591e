// Pure derivation of roles, memberships, schemas and default privileges from catalog rows.
// Memberships are de-duplicated per (role, member); default rows keep only managed or declared grantees.

import {
  compareCodePoints,
  compareGrantees,
  compareObjectTypes,
  PUBLIC_GRANTEE,
  type DefaultPrivilegeEntry,
  type DefaultPrivilegeScopeKey,
  type ExecutorIdentity,
  type MembershipEdge,
  type ObjectType,
  type Privilege,
  type RoleEntry,
  type SchemaEntry,
} from '@rolepolicy/policy';

import type { DefaultAclRow } from './default-privilege.repository.js';
import type { MembershipRow } from './membership.repository.js';
import { canonicalPrivileges, privilegeFromCatalog } from './privileges.js';
import { parseRoleConfig } from './role-config.js';
import type { RoleRow } from './role.repository.js';
import type { SchemaRow } from './schema.repository.js';
import { keyOf } from './keys.js';

/** pg_roles rows to RoleEntry records. */
export function deriveRoles(rows: readonly RoleRow[]): RoleEntry[] {
  return rows
    .map((row) => ({
      name: row.name,
      state: {
        login: row.login,
        superuser: row.superuser,
        createdb: row.createdb,
        createrole: row.createrole,
        inherit: row.inherit,
        replication: row.replication,
        bypassrls: row.bypassrls,
        connection_limit: row.connection_limit,
        comment: row.comment,
        password_valid_until: row.valid_until,
        config: parseRoleConfig(row.config),
      },
    }))
    .sort((a, b) => compareCodePoints(a.name, b.name));
}

/**
 * One edge per (role, member, grantor): PostgreSQL 16+ keeps a row per grantor, each with its own
 * options, and `REVOKE ... GRANTED BY g` removes only g's row, so the diff must see every row (it keys
 * the edge on (role, member) itself). The bootstrap superuser as grantor is reported as null.
 * The PG16 CREATEROLE self-grant (created role -> executor, ADMIN, by the bootstrap superuser) is unmanaged.
 */
export function deriveMemberships(
  rows: readonly MembershipRow[],
  executor: ExecutorIdentity,
  serverVersionNum: number,
): MembershipEdge[] {
  const edges = new Map<string, MembershipEdge>();
  for (const row of rows) {
    const selfGrant =
      serverVersionNum >= 160000 &&
      row.member === executor.role &&
      !executor.superuser &&
      row.grantor_is_bootstrap &&
      row.admin;
    if (selfGrant) continue;
    const grantor = row.grantor_is_bootstrap ? null : row.grantor;
    const key = keyOf(row.role, row.member, grantor);
    const seen = edges.get(key);
    edges.set(key, {
      role: row.role,
      member: row.member,
      inherit: row.inherit || (seen?.inherit ?? false),
      admin: row.admin || (seen?.admin ?? false),
      grantor,
    });
  }
  // Null (bootstrap) grantor first, then grantors by name.
  const grantorOrder = (a: string | null | undefined, b: string | null | undefined): number =>
    (a ?? null) === (b ?? null) ? 0 : a == null ? -1 : b == null ? 1 : compareCodePoints(a, b);
  return [...edges.values()].sort(
    (a, b) =>
      compareCodePoints(a.role, b.role) ||
      compareCodePoints(a.member, b.member) ||
      grantorOrder(a.grantor, b.grantor),
  );
}

/** Schemas with owners and the owner's own CREATE/USAGE. */
export function deriveSchemas(rows: readonly SchemaRow[]): SchemaEntry[] {
  return rows
    .map((row) => ({
      name: row.name,
      owner: row.owner,
      owner_privileges: canonicalPrivileges(
        row.owner_privileges
          .map(privilegeFromCatalog)
          .filter((privilege): privilege is Privilege => privilege === 'CREATE' || privilege === 'USAGE'),
      ),
    }))
    .sort((a, b) => compareCodePoints(a.name, b.name));
}

/** `defaclobjtype` letter to ObjectType and back; acldefault spells sequence `s`. */
export const DEFAULT_ACL_LETTERS: Readonly<
  Partial<Record<ObjectType, { stored: string; acldefault: string }>>
> = {
  table: { stored: 'r', acldefault: 'r' },
  sequence: { stored: 'S', acldefault: 's' },
  function: { stored: 'f', acldefault: 'f' },
  type: { stored: 'T', acldefault: 'T' },
  schema: { stored: 'n', acldefault: 'n' },
};

function onTypeOfLetter(letter: string): ObjectType | null {
  for (const [type, letters] of Object.entries(DEFAULT_ACL_LETTERS)) {
    if (letters?.stored === letter) return type as ObjectType;
  }
  return null;
}

/**
 * Default privilege entries: role grantees only when managed; PUBLIC only for a declared
 * (owner, scope, on_type) pattern and the privileges it names. Global rows are only for declared pairs.
 */
export function deriveDefaultPrivileges(
  rows: readonly DefaultAclRow[],
  managedRoles: ReadonlySet<string>,
  declared: readonly DefaultPrivilegeScopeKey[],
): DefaultPrivilegeEntry[] {
  const groups = new Map<
    string,
    { entry: Omit<DefaultPrivilegeEntry, 'privileges'>; privileges: Privilege[] }
  >();
  for (const row of rows) {
    const onType = onTypeOfLetter(row.objtype);
    const privilege = privilegeFromCatalog(row.privilege);
    if (onType === null || privilege === null) continue;
    const matching = declared.filter(
      (key) =>
        key.owner === row.owner &&
        key.on_type === onType &&
        (key.scope.type === 'global' ? row.schema === null : key.scope.schema === row.schema),
    );
    if (row.schema === null && matching.length === 0) continue;
    if (row.grantee === PUBLIC_GRANTEE) {
      if (!matching.some((key) => key.public_privileges.includes(privilege))) continue;
    } else if (!managedRoles.has(row.grantee)) continue;
    const key = keyOf(row.owner, row.schema, onType, row.grantee);
    const group = groups.get(key) ?? {
      entry: {
        owner: row.owner,
        scope:
          row.schema === null ? { type: 'global' as const } : { type: 'schema' as const, schema: row.schema },
        on_type: onType,
        grantee: row.grantee,
      },
      privileges: [],
    };
    group.privileges.push(privilege);
    groups.set(key, group);
  }
  return [...groups.values()]
    .map((group) => ({ ...group.entry, privileges: canonicalPrivileges(group.privileges) }))
    .sort(compareDefaultPrivileges);
}

function scopeSortKey(entry: DefaultPrivilegeEntry): string | null {
  return entry.scope.type === 'global' ? null : entry.scope.schema;
}

/** Owner, then scope (global first), then on_type, then grantee. */
export function compareDefaultPrivileges(a: DefaultPrivilegeEntry, b: DefaultPrivilegeEntry): number {
  const sa = scopeSortKey(a);
  const sb = scopeSortKey(b);
  const scopeOrder = sa === sb ? 0 : sa === null ? -1 : sb === null ? 1 : compareCodePoints(sa, sb);
  return (
    compareCodePoints(a.owner, b.owner) ||
    scopeOrder ||
    compareObjectTypes(a.on_type, b.on_type) ||
    compareGrantees(a.grantee, b.grantee)
  );
}
