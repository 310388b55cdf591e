// Reads wildcard inventories (every object of each (kind, schema) scope) in one unnest-scoped query,
// grantability for unsatisfied wildcards (lazy), and declared function signatures via to_regprocedure.

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';

/** One object of a wildcard scope; `oid` is kept for the grantability read. */
export interface InventoryRow {
  readonly oid: number;
  readonly kind: string;
  readonly schema: string;
  readonly name: string;
  readonly owner: string;
}

/** A (kind, schema) wildcard scope. */
export interface InventoryScope {
  readonly kind: string;
  readonly schema: string;
}

/** An (object, privilege) pair whose grantability is asked. */
export interface GrantabilityQuestion {
  readonly oid: number;
  readonly kind: string;
  readonly privilege: string;
}

/** The answer: can current_user grant `privilege` on the object (owner membership or WITH GRANT OPTION)? */
export interface GrantabilityRow {
  readonly oid: number;
  readonly privilege: string;
  readonly grantable: boolean;
}

/** A declared function name and its lookup text (`"schema"."base"(args)`). */
export interface SignatureLookup {
  readonly schema: string;
  readonly declared: string;
  readonly lookup: string;
  readonly has_args: boolean;
}

/** Resolved identity (`proname(identity args)`) of a declared signature, null when missing. */
export interface SignatureRow {
  readonly schema: string;
  readonly declared: string;
  readonly identity: string | null;
}

/** Inventory, grantability and signature reads. */
export class InventoryRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** All objects of every scope, one query; identity arguments are computed only for function scopes. */
  async inventory(scopes: readonly InventoryScope[]): Promise<InventoryRow[]> {
    const schemas = scopes.map((scope) => scope.schema);
    const kinds = scopes.map((scope) => scope.kind);
    // ROWS FROM of qualified unnests: the multi-argument `unnest(a, b)` form exists only unqualified (ADR 0023).
    const result = await sql<InventoryRow>`
      WITH scope AS (SELECT * FROM ROWS FROM (pg_catalog.unnest(${schemas}::text[]), pg_catalog.unnest(${kinds}::text[])) AS s(schema, kind))
      SELECT o.oid, o.kind, o.schema, o.name, pg_catalog.pg_get_userbyid(o.owner_oid) AS owner
      FROM (
        SELECT c.oid::int8::float8 AS oid,
               CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view'
                              WHEN 'm' THEN 'materialized_view' ELSE 'sequence' END AS kind,
               n.nspname::text AS schema, c.relname::text AS name, c.relowner AS owner_oid
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S') AND n.nspname IN (SELECT schema FROM scope)
        UNION ALL
        SELECT p.oid::int8::float8, 'function', n.nspname::text,
               p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')', p.proowner
        FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname IN (SELECT schema FROM scope WHERE kind = 'function')
        UNION ALL
        SELECT t.oid::int8::float8, 'type', n.nspname::text, t.typname::text, t.typowner
        FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname IN (SELECT schema FROM scope WHERE kind = 'type')
          AND t.typtype <> 'p'
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
          AND (t.typrelid = 0 OR EXISTS (
            SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c'))
      ) o
      JOIN scope s ON s.schema = o.schema AND s.kind = o.kind
      ORDER BY o.kind, o.schema, o.name`.execute(this.db);
    return result.rows;
  }

  /** Per (object, privilege): grantable by current_user through owner membership or WITH GRANT OPTION. */
  async grantability(questions: readonly GrantabilityQuestion[]): Promise<GrantabilityRow[]> {
    const oids = questions.map((question) => question.oid);
    const kinds = questions.map((question) => question.kind);
    const privileges = questions.map((question) => question.privilege);
    const result = await sql<GrantabilityRow>`
      SELECT q.oid::int8::float8 AS oid, q.privilege,
        CASE q.kind
          WHEN 'function' THEN
            pg_catalog.pg_has_role(current_user, (SELECT proowner FROM pg_catalog.pg_proc WHERE oid = q.oid), 'USAGE')
            OR pg_catalog.has_function_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
          WHEN 'type' THEN
            pg_catalog.pg_has_role(current_user, (SELECT typowner FROM pg_catalog.pg_type WHERE oid = q.oid), 'USAGE')
            OR pg_catalog.has_type_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
          WHEN 'sequence' THEN
            pg_catalog.pg_has_role(current_user, (SELECT relowner FROM pg_catalog.pg_class WHERE oid = q.oid), 'USAGE')
            OR pg_catalog.has_sequence_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
          ELSE
            pg_catalog.pg_has_role(current_user, (SELECT relowner FROM pg_catalog.pg_class WHERE oid = q.oid), 'USAGE')
            OR pg_catalog.has_table_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
        END AS grantable
      FROM ROWS FROM (pg_catalog.unnest(${oids}::float8[]::int8[]::oid[]), pg_catalog.unnest(${kinds}::text[]), pg_catalog.unnest(${privileges}::text[]))
        AS q(oid, kind, privilege)`.execute(this.db);
    return result.rows;
  }

  /** Resolves declared signatures through to_regprocedure (to_regproc for names without arguments). */
  async functionSignatures(lookups: readonly SignatureLookup[]): Promise<SignatureRow[]> {
    const schemas = lookups.map((lookup) => lookup.schema);
    const declared = lookups.map((lookup) => lookup.declared);
    const texts = lookups.map((lookup) => lookup.lookup);
    const hasArgs = lookups.map((lookup) => lookup.has_args);
    const result = await sql<SignatureRow>`
      SELECT s.schema, s.declared,
        (SELECT p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'
         FROM pg_catalog.pg_proc p
         WHERE p.oid = CASE WHEN s.has_args THEN pg_catalog.to_regprocedure(s.lookup)::oid
                            ELSE pg_catalog.to_regproc(s.lookup)::oid END) AS identity
      FROM ROWS FROM (pg_catalog.unnest(${schemas}::text[]), pg_catalog.unnest(${declared}::text[]), pg_catalog.unnest(${texts}::text[]), pg_catalog.unnest(${hasArgs}::bool[]))
        AS s(schema, declared, lookup, has_args)`.execute(this.db);
    return result.rows;
  }
}
