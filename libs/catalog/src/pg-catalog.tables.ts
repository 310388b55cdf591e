// Kysely table interfaces for the pg_catalog relations inspection reads (only the columns it uses).
// Catalog OIDs come back from node-postgres as numbers; aclitem arrays are opaque and only ever exploded.

import type { Generated } from 'kysely';

/** An opaque `aclitem[]` value; never read directly, only passed to aclexplode/acldefault. */
export type AclArray = { readonly __brand: 'aclitem[]' };

/** `pg_roles`: the readable view over pg_authid (no superuser needed). */
export interface PgRolesTable {
  oid: number;
  rolname: string;
  rolsuper: boolean;
  rolinherit: boolean;
  rolcreaterole: boolean;
  rolcreatedb: boolean;
  rolcanlogin: boolean;
  rolreplication: boolean;
  rolbypassrls: boolean;
  rolconnlimit: number;
  rolvaliduntil: Date | null;
  rolconfig: string[] | null;
}

/** `pg_shdescription`: comments on shared objects (roles). */
export interface PgShdescriptionTable {
  objoid: number;
  classoid: number;
  description: string;
}

/** `pg_auth_members`: membership rows; `inherit_option` exists on PostgreSQL 16+ only. */
export interface PgAuthMembersTable {
  roleid: number;
  member: number;
  grantor: number;
  admin_option: boolean;
  inherit_option: Generated<boolean>;
}

/** `pg_namespace`. */
export interface PgNamespaceTable {
  oid: number;
  nspname: string;
  nspowner: number;
  nspacl: AclArray | null;
}

/** `pg_class` (relations). */
export interface PgClassTable {
  oid: number;
  relname: string;
  relnamespace: number;
  relkind: string;
  relowner: number;
  relacl: AclArray | null;
}

/** `pg_proc` (functions, procedures, aggregates). */
export interface PgProcTable {
  oid: number;
  proname: string;
  pronamespace: number;
  proowner: number;
  proacl: AclArray | null;
}

/** `pg_type`. */
export interface PgTypeTable {
  oid: number;
  typname: string;
  typnamespace: number;
  typowner: number;
  typtype: string;
  typrelid: number;
  typarray: number;
  typacl: AclArray | null;
}

/** `pg_database`. */
export interface PgDatabaseTable {
  oid: number;
  datname: string;
  datdba: number;
  datacl: AclArray | null;
}

/** `pg_default_acl`: defaclnamespace 0 is the global layer. */
export interface PgDefaultAclTable {
  oid: number;
  defaclrole: number;
  defaclnamespace: number;
  defaclobjtype: string;
  defaclacl: AclArray;
}

/** The catalog relations inspection may read, keyed as Kysely expects (schema-qualified). */
export interface PgCatalog {
  'pg_catalog.pg_roles': PgRolesTable;
  'pg_catalog.pg_shdescription': PgShdescriptionTable;
  'pg_catalog.pg_auth_members': PgAuthMembersTable;
  'pg_catalog.pg_namespace': PgNamespaceTable;
  'pg_catalog.pg_class': PgClassTable;
  'pg_catalog.pg_proc': PgProcTable;
  'pg_catalog.pg_type': PgTypeTable;
  'pg_catalog.pg_database': PgDatabaseTable;
  'pg_catalog.pg_default_acl': PgDefaultAclTable;
}

/** One row of `aclexplode(aclitem[])`; grantee 0 is PUBLIC. */
export interface AclExplodeRow {
  grantor: number;
  grantee: number;
  privilege_type: string;
  is_grantable: boolean;
}
