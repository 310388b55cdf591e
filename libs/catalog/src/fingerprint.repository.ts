// The catalog fingerprint's reads: per catalog family, a count and a sum of 64-bit hashes of each raw row
// (names resolved, ACLs as text) in the managed scope, computed in the database so no row is transferred.

import { sql, type Kysely, type RawBuilder } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';

/** What the fingerprint reads, as name arrays (each bound as one parameter). */
export interface FingerprintScope {
  /** Every role the inspection names: scope roles, membership grantors, default owners, wildcard grantees. */
  readonly roles: readonly string[];
  /** Granted roles whose memberships the inspection reads (scope roles and membership grantors). */
  readonly granted: readonly string[];
  /** Every schema the scope names (privilege, owned, wildcard, PUBLIC rule and signature schemas). */
  readonly schemas: readonly string[];
  /** Owners of declared global default privilege pairs. */
  readonly globalDefaultOwners: readonly string[];
}

/**
 * One `count:sum` text per family. The sums are order-independent (no sort of 50,000 rows) and exact
 * (numeric, no wrap-around): a changed row changes its term unless two 64-bit hashes collide.
 */
export interface FingerprintRow {
  readonly roles: string;
  readonly memberships: string;
  readonly executor_usage: string;
  readonly schemas: string;
  readonly relations: string;
  readonly functions: string;
  readonly types: string;
  readonly database_acl: string;
  readonly default_acls: string;
}

/**
 * The ACL and inventory reads' type filter (no array, pseudo or table row types), or a superset of it:
 * an array type is recognised through its element (`typelem`, then the element's `typarray`, both by
 * index) instead of a scan of every type's `typarray` (pg_type.typarray has no index).
 */
const MODELLED_TYPE = sql<boolean>`t.typtype <> 'p'
    AND NOT (t.typelem <> 0 AND EXISTS (
      SELECT 1 FROM pg_catalog.pg_type e WHERE e.oid = t.typelem AND e.typarray = t.oid))
    AND (t.typrelid = 0 OR EXISTS (
      SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c'))`;

/** `count:sum` of the 64-bit hashes of each row's record text (unambiguous: record_out quotes fields). */
function DIGEST(row: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((${row})::text, 0)::numeric), 0)`;
}

/** Reads the fingerprint parts, every catalog family in one statement. */
export class FingerprintRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /**
   * Every row the inspection could derive a snapshot field from, hashed as its record text: role
   * attributes, config and comment; membership rows with every option column of this major and the
   * member's rolinherit; the executor's USAGE closure (not for a superuser: every role, and unread); schema owners and ACLs; every relation, function
   * and modelled type in the schemas with owner and ACL (so a new table in a wildcard schema counts);
   * the database ACL; default ACL rows of the schemas and of the declared global owners.
   */
  async parts(scope: FingerprintScope): Promise<FingerprintRow> {
    const roles = [...scope.roles];
    const granted = [...scope.granted];
    const schemas = [...scope.schemas];
    const owners = [...scope.globalDefaultOwners];
    // One statement, one round trip: each family is an uncorrelated scalar subquery, which PostgreSQL
    // plans on its own as before (as one statement of scalar subqueries over a shared CTE it was several
    // times slower than the sum of the parts; without the CTE each subquery keeps its own plan).
    const part = (query: RawBuilder<unknown>): RawBuilder<string> => sql<string>`(${query})`;
    // The family's rows joined to the scope's schemas (`n`), as the inspection's own reads join them.
    const inSchemas = (column: string): RawBuilder<unknown> =>
      sql`JOIN pg_catalog.pg_namespace n ON n.oid = ${sql.ref(column)} AND n.nspname = ANY(${schemas}::text[])`;
    const result = await sql<FingerprintRow>`SELECT ${part(sql`
        SELECT ${DIGEST(sql`ROW(r.*, d.description)`)}
        FROM pg_catalog.pg_roles r
        LEFT JOIN pg_catalog.pg_shdescription d
          ON d.objoid = r.oid AND d.classoid = 'pg_catalog.pg_authid'::pg_catalog.regclass
        WHERE r.rolname = ANY(${roles}::text[])`)} AS roles,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(am.*, pg_catalog.pg_get_userbyid(am.roleid), pg_catalog.pg_get_userbyid(am.member),
          pg_catalog.pg_get_userbyid(am.grantor), m.rolinherit)`)}
        FROM pg_catalog.pg_auth_members am
        JOIN pg_catalog.pg_roles g ON g.oid = am.roleid
        JOIN pg_catalog.pg_roles m ON m.oid = am.member
        WHERE g.rolname = ANY(${granted}::text[])`)} AS memberships,
      ${part(sql`
        SELECT ${DIGEST(sql`g.rolname`)}
        FROM pg_catalog.pg_roles g
        WHERE NOT (SELECT x.rolsuper FROM pg_catalog.pg_roles x WHERE x.rolname = current_user)
          AND pg_catalog.pg_has_role(current_user, g.oid, 'USAGE')`)} AS executor_usage,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(n.oid, n.nspname, pg_catalog.pg_get_userbyid(n.nspowner), n.nspacl)`)}
        FROM pg_catalog.pg_namespace n WHERE n.nspname = ANY(${schemas}::text[])`)} AS schemas,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(c.oid, n.nspname, c.relname, c.relkind,
          pg_catalog.pg_get_userbyid(c.relowner), c.relacl)`)}
        FROM pg_catalog.pg_class c ${inSchemas('c.relnamespace')}
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S')`)} AS relations,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(p.oid, n.nspname, p.proname,
          pg_catalog.pg_get_function_identity_arguments(p.oid), p.prokind,
          pg_catalog.pg_get_userbyid(p.proowner), p.proacl)`)}
        FROM pg_catalog.pg_proc p ${inSchemas('p.pronamespace')}`)} AS functions,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(t.oid, n.nspname, t.typname,
          pg_catalog.pg_get_userbyid(t.typowner), t.typacl)`)}
        FROM pg_catalog.pg_type t ${inSchemas('t.typnamespace')} WHERE ${MODELLED_TYPE}`)} AS types,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(d.oid, d.datname, pg_catalog.pg_get_userbyid(d.datdba), d.datacl)`)}
        FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()`)} AS database_acl,
      ${part(sql`
        SELECT ${DIGEST(sql`ROW(da.oid, pg_catalog.pg_get_userbyid(da.defaclrole), n.nspname,
          da.defaclobjtype, da.defaclacl)`)}
        FROM pg_catalog.pg_default_acl da
        LEFT JOIN pg_catalog.pg_namespace n ON n.oid = da.defaclnamespace AND n.nspname = ANY(${schemas}::text[])
        WHERE n.oid IS NOT NULL
           OR (da.defaclnamespace = 0 AND pg_catalog.pg_get_userbyid(da.defaclrole) = ANY(${owners}::text[]))`)} AS default_acls`.execute(
      this.db,
    );
    // Aggregates always return one row, so every column is a `count:sum` text.
    return result.rows[0]!;
  }

  /**
   * Password verifiers of the roles, hashed like the other rows, or null when `pg_authid` is not readable
   * (only superusers read it; the inspection never reads verifiers, so nothing it compares is missed then).
   * The verifier itself never leaves the database.
   */
  async verifiers(roles: readonly string[]): Promise<string | null> {
    const readable = await sql<{ readable: boolean }>`
      SELECT pg_catalog.has_table_privilege('pg_catalog.pg_authid', 'SELECT') AS readable`.execute(this.db);
    if (readable.rows[0]?.readable !== true) return null;
    const result = await sql<{ d: string }>`
      SELECT ${DIGEST(sql`ROW(a.oid, a.rolpassword)`)} AS d
      FROM pg_catalog.pg_authid a WHERE a.rolname = ANY(${[...roles]}::text[])`.execute(this.db);
    return result.rows[0]!.d;
  }
}
