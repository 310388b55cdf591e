// Reads object ACL rows per object family via aclexplode: explicit rows for managed role grantees, and
// PUBLIC rows (explicit or PostgreSQL's acldefault built-ins) only for families a PUBLIC rule names.

import { sql, type Kysely, type RawBuilder } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';
import { aclExplode, inTextArray, userById } from './sql-fragments.js';

/** Object family read by one query: relations carry their relkind letter in `kind`. */
export type AclFamily = 'relation' | 'function' | 'type' | 'schema' | 'database';

/** One exploded ACL item: `grantee` is `PUBLIC` for grantee OID 0. */
export interface AclRow {
  /** relkind letter for relations (r, p, v, m, S); otherwise the family name. */
  readonly kind: string;
  readonly schema: string | null;
  /** Relation/type name, `proname(identity args)`, schema name, or database name. */
  readonly name: string;
  readonly owner: string;
  readonly grantee: string;
  readonly grantor: string;
  readonly privilege: string;
}

/** Excludes array, pseudo and table row types; keeps composite types made by CREATE TYPE. */
const MODELLED_TYPE = sql<boolean>`t.typtype <> 'p'
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
  AND (t.typrelid = 0 OR EXISTS (
    SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c'))`;

const FUNCTION_KEY = sql<string>`p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'`;

/** ACL reads; one query per family, bound by schema and grantee arrays. */
export class ObjectAclRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /**
   * Explicit grants on tables, views, materialized views and sequences to the given roles. The owner's own
   * entry (materialised by the first GRANT) is not a grant: owners hold every privilege implicitly. One
   * row of it (SELECT) is kept as an ownership marker (`grantee = owner`): inspection lists the object
   * with its owner in the inventory, so a declared grant to the owner counts as held, and drops the row.
   */
  async relationGrants(schemas: readonly string[], roles: readonly string[]): Promise<AclRow[]> {
    return this.relations(sql`c.relacl`, schemas)
      .innerJoin('pg_catalog.pg_roles as g', 'g.oid', 'a.grantee')
      .select('g.rolname as grantee')
      .where(inTextArray('g.rolname', roles))
      .where(sql<boolean>`(a.grantee <> c.relowner OR a.privilege_type = 'SELECT')`)
      .execute();
  }

  /** PUBLIC rows (explicit, or acldefault built-ins when the ACL is NULL) on relations. */
  async relationPublicRows(schemas: readonly string[]): Promise<AclRow[]> {
    return this.relations(
      sql`COALESCE(c.relacl, pg_catalog.acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner))`,
      schemas,
    )
      .select(sql<string>`'PUBLIC'`.as('grantee'))
      .where('a.grantee', '=', sql<number>`0`)
      .execute();
  }

  /**
   * Explicit grants on functions and procedures (keyed by identity signature) to the given roles; the
   * owner's own EXECUTE row is an ownership marker only (see relationGrants).
   */
  async functionGrants(schemas: readonly string[], roles: readonly string[]): Promise<AclRow[]> {
    return this.functions(sql`p.proacl`, schemas)
      .innerJoin('pg_catalog.pg_roles as g', 'g.oid', 'a.grantee')
      .select('g.rolname as grantee')
      .where(inTextArray('g.rolname', roles))
      .execute();
  }

  /** PUBLIC rows on functions, including the built-in EXECUTE of a NULL proacl. */
  async functionPublicRows(schemas: readonly string[]): Promise<AclRow[]> {
    return this.functions(sql`COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))`, schemas)
      .select(sql<string>`'PUBLIC'`.as('grantee'))
      .where('a.grantee', '=', sql<number>`0`)
      .execute();
  }

  /**
   * Explicit grants on types (no array, pseudo or table row types) to the given roles; the owner's own
   * USAGE row is an ownership marker only (see relationGrants).
   */
  async typeGrants(schemas: readonly string[], roles: readonly string[]): Promise<AclRow[]> {
    return this.types(sql`t.typacl`, schemas)
      .innerJoin('pg_catalog.pg_roles as g', 'g.oid', 'a.grantee')
      .select('g.rolname as grantee')
      .where(inTextArray('g.rolname', roles))
      .execute();
  }

  /** PUBLIC rows on types, including the built-in USAGE of a NULL typacl. */
  async typePublicRows(schemas: readonly string[]): Promise<AclRow[]> {
    return this.types(sql`COALESCE(t.typacl, pg_catalog.acldefault('T', t.typowner))`, schemas)
      .select(sql<string>`'PUBLIC'`.as('grantee'))
      .where('a.grantee', '=', sql<number>`0`)
      .execute();
  }

  /** Explicit schema grants to the given roles, without the owner's own entries (tracked on the schema). */
  async schemaGrants(schemas: readonly string[], roles: readonly string[]): Promise<AclRow[]> {
    return this.schemas(sql`n.nspacl`, schemas)
      .innerJoin('pg_catalog.pg_roles as g', 'g.oid', 'a.grantee')
      .select('g.rolname as grantee')
      .where(inTextArray('g.rolname', roles))
      .where(sql<boolean>`a.grantee <> n.nspowner`)
      .execute();
  }

  /** PUBLIC rows on schemas (acldefault gives none, but an explicit GRANT ... TO PUBLIC does). */
  async schemaPublicRows(schemas: readonly string[]): Promise<AclRow[]> {
    return this.schemas(sql`COALESCE(n.nspacl, pg_catalog.acldefault('n', n.nspowner))`, schemas)
      .select(sql<string>`'PUBLIC'`.as('grantee'))
      .where('a.grantee', '=', sql<number>`0`)
      .execute();
  }

  /** Explicit grants on the current database to roles other than its owner. */
  async databaseGrants(roles: readonly string[]): Promise<AclRow[]> {
    return this.database(sql`d.datacl`)
      .innerJoin('pg_catalog.pg_roles as g', 'g.oid', 'a.grantee')
      .select('g.rolname as grantee')
      .where(inTextArray('g.rolname', roles))
      .where(sql<boolean>`a.grantee <> d.datdba`)
      .execute();
  }

  /** PUBLIC rows on the current database, including the built-in CONNECT and TEMPORARY. */
  async databasePublicRows(): Promise<AclRow[]> {
    return this.database(sql`COALESCE(d.datacl, pg_catalog.acldefault('d', d.datdba))`)
      .select(sql<string>`'PUBLIC'`.as('grantee'))
      .where('a.grantee', '=', sql<number>`0`)
      .execute();
  }

  private relations(acl: RawBuilder<unknown>, schemas: readonly string[]) {
    return this.db
      .selectFrom('pg_catalog.pg_class as c')
      .innerJoin('pg_catalog.pg_namespace as n', 'n.oid', 'c.relnamespace')
      .crossJoinLateral(aclExplode(acl))
      .select([
        sql<string>`c.relkind::text`.as('kind'),
        'n.nspname as schema',
        'c.relname as name',
        userById('c.relowner').as('owner'),
        userById('a.grantor').as('grantor'),
        'a.privilege_type as privilege',
      ])
      .where(sql<boolean>`c.relkind IN ('r', 'p', 'v', 'm', 'S')`)
      .where(inTextArray('n.nspname', schemas));
  }

  private functions(acl: RawBuilder<unknown>, schemas: readonly string[]) {
    return this.db
      .selectFrom('pg_catalog.pg_proc as p')
      .innerJoin('pg_catalog.pg_namespace as n', 'n.oid', 'p.pronamespace')
      .crossJoinLateral(aclExplode(acl))
      .select([
        sql<string>`'function'`.as('kind'),
        'n.nspname as schema',
        FUNCTION_KEY.as('name'),
        userById('p.proowner').as('owner'),
        userById('a.grantor').as('grantor'),
        'a.privilege_type as privilege',
      ])
      .where(inTextArray('n.nspname', schemas));
  }

  private types(acl: RawBuilder<unknown>, schemas: readonly string[]) {
    return this.db
      .selectFrom('pg_catalog.pg_type as t')
      .innerJoin('pg_catalog.pg_namespace as n', 'n.oid', 't.typnamespace')
      .crossJoinLateral(aclExplode(acl))
      .select([
        sql<string>`'type'`.as('kind'),
        'n.nspname as schema',
        't.typname as name',
        userById('t.typowner').as('owner'),
        userById('a.grantor').as('grantor'),
        'a.privilege_type as privilege',
      ])
      .where(inTextArray('n.nspname', schemas))
      .where(MODELLED_TYPE);
  }

  private schemas(acl: RawBuilder<unknown>, schemas: readonly string[]) {
    return this.db
      .selectFrom('pg_catalog.pg_namespace as n')
      .crossJoinLateral(aclExplode(acl))
      .select([
        sql<string>`'schema'`.as('kind'),
        sql<string | null>`NULL::text`.as('schema'),
        'n.nspname as name',
        userById('n.nspowner').as('owner'),
        userById('a.grantor').as('grantor'),
        'a.privilege_type as privilege',
      ])
      .where(inTextArray('n.nspname', schemas));
  }

  private database(acl: RawBuilder<unknown>) {
    return this.db
      .selectFrom('pg_catalog.pg_database as d')
      .crossJoinLateral(aclExplode(acl))
      .select([
        sql<string>`'database'`.as('kind'),
        sql<string | null>`NULL::text`.as('schema'),
        'd.datname as name',
        userById('d.datdba').as('owner'),
        userById('a.grantor').as('grantor'),
        'a.privilege_type as privilege',
      ])
      .where('d.datname', '=', sql<string>`pg_catalog.current_database()`);
  }
}
