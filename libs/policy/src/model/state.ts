// Access state shared by the desired graph (expanded policy) and the live snapshot: roles, schemas,
// grants, default privileges and membership edges, as plain JSON-safe records keyed as the diff keys them.

import type { Grantee, ObjectType, Privilege } from './vocabulary.js';

/**
 * A role's attributes. Defaults are PostgreSQL's: every flag false except `inherit`, `connection_limit` -1.
 * `password_valid_until` is normalised to UTC whole seconds with `Z` (`2025-12-31T00:00:00Z`), null for none.
 * `config` keys are lowercased; list GUC values (search_path, ...) are canonical (`a, "My Schema"`).
 */
export interface RoleState {
  readonly login: boolean;
  readonly superuser: boolean;
  readonly createdb: boolean;
  readonly createrole: boolean;
  readonly inherit: boolean;
  readonly replication: boolean;
  readonly bypassrls: boolean;
  readonly connection_limit: number;
  readonly comment: string | null;
  readonly password_valid_until: string | null;
  readonly config: Readonly<Record<string, string>>;
}

/** A named role with its attributes. */
export interface RoleEntry {
  readonly name: string;
  readonly state: RoleState;
}

/**
 * A schema. `owner` null (desired side) means "ensure it exists, never touch its owner".
 * `owner_privileges` are the owner's own CREATE/USAGE, tracked here and never as grant rows.
 */
export interface SchemaEntry {
  readonly name: string;
  readonly owner: string | null;
  readonly owner_privileges: readonly Privilege[];
}

/**
 * What a grant targets, keyed as the diff keys it:
 * schema-level: schema null, name = schema name; database: schema null, name = database name;
 * relation/sequence/type: schema + object name or `*`; function: schema + `proname(identity args)` or `*`.
 */
export interface GrantTarget {
  readonly object_type: ObjectType;
  readonly schema: string | null;
  readonly name: string | null;
}

/** Privileges held by (or asserted for) one grantee on one target. */
export interface GrantEntry extends GrantTarget {
  readonly grantee: Grantee;
  readonly privileges: readonly Privilege[];
  /** Live side only, when every row of the key shares one grantor other than the object owner. */
  readonly grantor?: string | null;
}

/** Default-privilege scope: global renders without `IN SCHEMA`. Global sorts first. */
export type DefaultPrivilegeScope =
  { readonly type: 'global' } | { readonly type: 'schema'; readonly schema: string };

/** Default privileges for objects `owner` creates in `scope`, granted to `grantee`. */
export interface DefaultPrivilegeEntry {
  readonly owner: string;
  readonly scope: DefaultPrivilegeScope;
  readonly on_type: ObjectType;
  readonly grantee: Grantee;
  readonly privileges: readonly Privilege[];
}

/** A membership edge: `member` is a member of `role`. Keyed on (role, member). */
export interface MembershipEdge {
  readonly role: string;
  readonly member: string;
  readonly inherit: boolean;
  readonly admin: boolean;
  /** Live side only (PG16+ grantor rows); null when the grantor is the bootstrap superuser or unknown. */
  readonly grantor?: string | null;
}
