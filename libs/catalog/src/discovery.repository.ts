// Reads for `rolepolicy generate`: which roles, schemas and default-ACL patterns exist (the scope a policy
// would name), which roles have a password (never the password), and the access the spec cannot express
// (column privileges, grant options, MAINTAIN, object kinds outside the spec, memberships outside the selection).

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';

/** A role of the cluster; `bootstrap` is the role that ran initdb (OID 10). */
export interface DiscoveredRole {
  readonly name: string;
  readonly bootstrap: boolean;
}

/** One stored pg_default_acl row's key; `schema` null is the global layer. */
export interface DefaultAclKey {
  readonly owner: string;
  readonly schema: string | null;
  readonly objtype: string;
}

/** Access a selected role holds that a PostgresPolicy cannot state. */
export interface InexpressibleRow {
  /**
   * column_privilege, grant_option, maintain, language, foreign_data_wrapper, foreign_server,
   * large_object, tablespace, membership_outside_selection, row_security_policy, database_role_setting.
   */
  readonly kind: string;
  readonly grantee: string;
  /** Human-readable target, e.g. `"app"."orders"."email"` or `role "admins"`. */
  readonly target: string;
  readonly privilege: string;
}

/** Discovery reads; each one query, bound by one array parameter where it takes names. */
export class DiscoveryRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** Every role of the cluster. */
  async roles(): Promise<DiscoveredRole[]> {
    const result = await sql<DiscoveredRole>`
      SELECT r.rolname::text AS name, r.oid = 10 AS bootstrap
      FROM pg_catalog.pg_roles r
      ORDER BY r.rolname`.execute(this.db);
    return result.rows;
  }

  /** Every schema of the current database except the system ones (pg_* and information_schema). */
  async schemas(): Promise<string[]> {
    const result = await sql<{ name: string }>`
      SELECT n.nspname::text AS name
      FROM pg_catalog.pg_namespace n
      WHERE n.nspname <> 'information_schema' AND NOT pg_catalog.starts_with(n.nspname::text, 'pg_')
      ORDER BY n.nspname`.execute(this.db);
    return result.rows.map((row) => row.name);
  }

  /** The key of every stored default ACL row. */
  async defaultAclKeys(): Promise<DefaultAclKey[]> {
    const result = await sql<DefaultAclKey>`
      SELECT pg_catalog.pg_get_userbyid(d.defaclrole)::text AS owner, n.nspname::text AS schema,
             d.defaclobjtype::text AS objtype
      FROM pg_catalog.pg_default_acl d
      LEFT JOIN pg_catalog.pg_namespace n ON n.oid = d.defaclnamespace
      ORDER BY 1, 2 NULLS FIRST, 3`.execute(this.db);
    return result.rows;
  }

  /** Whether current_user may read pg_authid (superusers, or an explicit grant). */
  async canReadPasswords(): Promise<boolean> {
    const result = await sql<{ readable: boolean }>`
      SELECT pg_catalog.has_table_privilege('pg_catalog.pg_authid', 'SELECT') AS readable`.execute(this.db);
    return result.rows[0]?.readable === true;
  }

  /** The named roles that have a password (only whether one is set; the verifier is never selected). */
  async rolesWithPassword(names: readonly string[]): Promise<string[]> {
    const result = await sql<{ name: string }>`
      SELECT a.rolname::text AS name
      FROM pg_catalog.pg_authid a
      WHERE a.rolname = ANY(${[...names]}::text[]) AND a.rolpassword IS NOT NULL
      ORDER BY a.rolname`.execute(this.db);
    return result.rows.map((row) => row.name);
  }

  /**
   * What the named roles hold that a policy cannot state: column privileges, grant options, MAINTAIN
   * (PostgreSQL 17+), privileges on languages, foreign data wrappers, foreign servers, large objects and
   * tablespaces, memberships in roles outside the selection (other than predefined `pg_*` roles),
   * row-level security policies naming them, and their per-database settings (ALTER ROLE ... IN DATABASE).
   */
  async inexpressible(names: readonly string[]): Promise<InexpressibleRow[]> {
    const roles = [...names];
    const result = await sql<InexpressibleRow>`
      WITH sel AS (SELECT r.oid, r.rolname::text AS name FROM pg_catalog.pg_roles r WHERE r.rolname = ANY(${roles}::text[])),
      acl AS (
        SELECT 'relation' AS family, pg_catalog.format('%I.%I', n.nspname, c.relname) AS target, c.relowner AS owner, c.relacl AS acl
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relacl IS NOT NULL
        UNION ALL
        SELECT 'function', pg_catalog.format('%I.%s', n.nspname, p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'), p.proowner, p.proacl
        FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE p.proacl IS NOT NULL
        UNION ALL
        SELECT 'type', pg_catalog.format('%I.%I', n.nspname, t.typname), t.typowner, t.typacl
        FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
        WHERE t.typacl IS NOT NULL
        UNION ALL
        SELECT 'schema', pg_catalog.format('%I', n.nspname), n.nspowner, n.nspacl
        FROM pg_catalog.pg_namespace n WHERE n.nspacl IS NOT NULL
        UNION ALL
        SELECT 'database', pg_catalog.format('%I', d.datname), d.datdba, d.datacl
        FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database() AND d.datacl IS NOT NULL
        UNION ALL
        SELECT 'language', pg_catalog.format('language %I', l.lanname), l.lanowner, l.lanacl
        FROM pg_catalog.pg_language l WHERE l.lanacl IS NOT NULL
        UNION ALL
        SELECT 'foreign_data_wrapper', pg_catalog.format('foreign data wrapper %I', w.fdwname), w.fdwowner, w.fdwacl
        FROM pg_catalog.pg_foreign_data_wrapper w WHERE w.fdwacl IS NOT NULL
        UNION ALL
        SELECT 'foreign_server', pg_catalog.format('foreign server %I', s.srvname), s.srvowner, s.srvacl
        FROM pg_catalog.pg_foreign_server s WHERE s.srvacl IS NOT NULL
        UNION ALL
        SELECT 'large_object', pg_catalog.format('large object %s', m.oid), m.lomowner, m.lomacl
        FROM pg_catalog.pg_largeobject_metadata m WHERE m.lomacl IS NOT NULL
        UNION ALL
        SELECT 'tablespace', pg_catalog.format('tablespace %I', t.spcname), t.spcowner, t.spcacl
        FROM pg_catalog.pg_tablespace t WHERE t.spcacl IS NOT NULL
      )
      SELECT DISTINCT x.kind, x.grantee, x.target, x.privilege FROM (
        SELECT CASE WHEN acl.family IN ('language', 'foreign_data_wrapper', 'foreign_server', 'large_object', 'tablespace') THEN acl.family
                    WHEN a.privilege_type = 'MAINTAIN' THEN 'maintain'
                    ELSE 'grant_option' END AS kind,
               sel.name AS grantee, acl.target, a.privilege_type::text AS privilege
        FROM acl CROSS JOIN LATERAL pg_catalog.aclexplode(acl.acl) a JOIN sel ON sel.oid = a.grantee
        WHERE a.grantee <> acl.owner
          AND (acl.family IN ('language', 'foreign_data_wrapper', 'foreign_server', 'large_object', 'tablespace')
               OR a.privilege_type = 'MAINTAIN' OR a.is_grantable)
        UNION ALL
        SELECT 'column_privilege', sel.name,
               pg_catalog.format('%I.%I.%I', n.nspname, c.relname, att.attname), a.privilege_type::text
        FROM pg_catalog.pg_attribute att
        JOIN pg_catalog.pg_class c ON c.oid = att.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        CROSS JOIN LATERAL pg_catalog.aclexplode(att.attacl) a
        JOIN sel ON sel.oid = a.grantee
        WHERE att.attacl IS NOT NULL AND NOT att.attisdropped
        UNION ALL
        SELECT 'membership_outside_selection', sel.name, pg_catalog.format('role %I', g.rolname), 'MEMBER'
        FROM pg_catalog.pg_auth_members m
        JOIN sel ON sel.oid = m.member
        JOIN pg_catalog.pg_roles g ON g.oid = m.roleid
        WHERE NOT g.rolname = ANY(${roles}::text[]) AND NOT pg_catalog.starts_with(g.rolname::text, 'pg_')
        UNION ALL
        SELECT 'row_security_policy', sel.name,
               pg_catalog.format('policy %I on %I.%I', pol.polname, n.nspname, c.relname), 'POLICY'
        FROM pg_catalog.pg_policy pol
        JOIN pg_catalog.pg_class c ON c.oid = pol.polrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        JOIN sel ON sel.oid = ANY(pol.polroles)
        UNION ALL
        SELECT 'database_role_setting', sel.name, pg_catalog.format('database %I', d.datname), cfg.setting
        FROM pg_catalog.pg_db_role_setting s
        JOIN sel ON sel.oid = s.setrole
        JOIN pg_catalog.pg_database d ON d.oid = s.setdatabase
        CROSS JOIN LATERAL pg_catalog.unnest(s.setconfig) AS cfg(setting)
      ) x
      ORDER BY x.kind, x.grantee, x.target, x.privilege`.execute(this.db);
    return result.rows;
  }

  /**
   * PostgreSQL 16+: memberships of or in the named roles granted WITH SET FALSE (the spec has no SET
   * option; the membership itself is exported).
   */
  async membershipsWithoutSet(names: readonly string[]): Promise<InexpressibleRow[]> {
    const result = await sql<InexpressibleRow>`
      SELECT DISTINCT 'membership_set_option' AS kind, m.rolname::text AS grantee,
             pg_catalog.format('role %I', g.rolname) AS target, 'SET FALSE' AS privilege
      FROM pg_catalog.pg_auth_members a
      JOIN pg_catalog.pg_roles m ON m.oid = a.member
      JOIN pg_catalog.pg_roles g ON g.oid = a.roleid
      WHERE NOT a.set_option AND (m.rolname = ANY(${[...names]}::text[]) OR g.rolname = ANY(${[...names]}::text[]))
      ORDER BY 2, 3`.execute(this.db);
    return result.rows;
  }
}
