// Reads default privileges (pg_default_acl): the schema layer in managed schemas, and the global layer
// only for declared (owner, object type) pairs, exploding acldefault when no row exists yet.

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';
import { aclExplode, inTextArray, userById } from './sql-fragments.js';

/** One exploded default ACL item. `schema` null is the global layer; owner self-entries never appear. */
export interface DefaultAclRow {
  readonly owner: string;
  readonly schema: string | null;
  /** `defaclobjtype` letter: r, S, f, T or n. */
  readonly objtype: string;
  readonly grantee: string;
  readonly privilege: string;
}

/** A declared global pair: the stored letter and the acldefault letter differ for sequences (S vs s). */
export interface GlobalDefaultPair {
  readonly owner: string;
  readonly objtype: string;
  readonly acldefault: string;
}

const GRANTEE_NAME = sql<string>`CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END`;

/** Default privilege reads; owner self-entries are dropped in SQL (they are PostgreSQL's implicit ones). */
export class DefaultPrivilegeRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** Schema-scoped rows in the given schemas, for any owner and grantee. */
  async schemaLayer(schemas: readonly string[]): Promise<DefaultAclRow[]> {
    return this.db
      .selectFrom('pg_catalog.pg_default_acl as d')
      .innerJoin('pg_catalog.pg_namespace as n', 'n.oid', 'd.defaclnamespace')
      .crossJoinLateral(aclExplode(sql`d.defaclacl`))
      .select([
        userById('d.defaclrole').as('owner'),
        sql<string | null>`n.nspname::text`.as('schema'),
        sql<string>`d.defaclobjtype::text`.as('objtype'),
        GRANTEE_NAME.as('grantee'),
        'a.privilege_type as privilege',
      ])
      .where(inTextArray('n.nspname', schemas))
      .where(sql<boolean>`a.grantee <> d.defaclrole`)
      .execute();
  }

  /** Global rows for the declared pairs; with no stored row, PostgreSQL's acldefault is what holds. */
  async globalLayer(pairs: readonly GlobalDefaultPair[]): Promise<DefaultAclRow[]> {
    const owners = pairs.map((pair) => pair.owner);
    const objtypes = pairs.map((pair) => pair.objtype);
    const defaults = pairs.map((pair) => pair.acldefault);
    return this.db
      .selectFrom(
        sql<{ owner: string; objtype: string; deflt: string }>`(
          SELECT * FROM ROWS FROM (pg_catalog.unnest(${owners}::text[]), pg_catalog.unnest(${objtypes}::text[]), pg_catalog.unnest(${defaults}::text[]))
            AS u(owner, objtype, deflt))`.as('s'),
      )
      .innerJoin('pg_catalog.pg_roles as o', 'o.rolname', 's.owner')
      .leftJoin('pg_catalog.pg_default_acl as d', (join) =>
        join
          .onRef('d.defaclrole', '=', 'o.oid')
          .on('d.defaclnamespace', '=', sql<number>`0`)
          .on(sql<boolean>`d.defaclobjtype = s.objtype::"char"`),
      )
      .crossJoinLateral(aclExplode(sql`COALESCE(d.defaclacl, pg_catalog.acldefault(s.deflt::"char", o.oid))`))
      .select([
        's.owner as owner',
        sql<string | null>`NULL::text`.as('schema'),
        's.objtype as objtype',
        GRANTEE_NAME.as('grantee'),
        'a.privilege_type as privilege',
      ])
      .where(sql<boolean>`a.grantee <> o.oid`)
      .execute();
  }
}
