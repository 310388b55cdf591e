// Small SQL building blocks shared by the catalog repositories: array binds and aclexplode laterals.
// Every filter binds one array parameter (`= ANY($n::text[])`), so no read is ever per object.

import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely';

import type { AclExplodeRow } from './pg-catalog.tables.js';

/** `<column> = ANY($n::text[])`: one parameter for the whole name list. */
export function inTextArray(column: string, values: readonly string[]): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} = ANY(${[...values]}::text[])`;
}

/** `aclexplode(<acl>)` as a lateral table named `a` (grantor, grantee, privilege_type, is_grantable). */
export function aclExplode(acl: RawBuilder<unknown>): AliasedRawBuilder<AclExplodeRow, 'a'> {
  return sql<AclExplodeRow>`pg_catalog.aclexplode(${acl})`.as('a');
}

/** `pg_catalog.pg_get_userbyid(<oid column>)`: a role name without another join. */
export function userById(column: string): RawBuilder<string> {
  return sql<string>`pg_catalog.pg_get_userbyid(${sql.ref(column)})`;
}
