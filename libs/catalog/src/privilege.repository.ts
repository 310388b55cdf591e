// Reads the privilege graph of ephemeral bundle roles (ADR 0021): each named role and every role it is a
// member of, transitively, with SUPERUSER, CREATEROLE, BYPASSRLS, REPLICATION and its direct memberships.

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';

/** One role reached from the named roles (the named ones included). */
export interface PrivilegeRow {
  readonly name: string;
  readonly superuser: boolean;
  readonly createrole: boolean;
  readonly bypassrls: boolean;
  readonly replication: boolean;
  /** Roles this role is a direct member of, sorted. */
  readonly member_of: string[];
}

/** Privilege reads; one query follows pg_auth_members to its closure (membership cycles are refused by PostgreSQL, UNION stops them anyway). */
export class PrivilegeRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** The named roles that exist and every role they belong to through any chain of memberships. */
  async reachable(roles: readonly string[]): Promise<PrivilegeRow[]> {
    const result = await sql<PrivilegeRow>`
      WITH RECURSIVE reach(oid) AS (
        SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = ANY(${[...roles]}::text[])
        UNION
        SELECT am.roleid FROM pg_catalog.pg_auth_members am JOIN reach ON am.member = reach.oid
      )
      SELECT r.rolname AS name, r.rolsuper AS superuser, r.rolcreaterole AS createrole,
             r.rolbypassrls AS bypassrls, r.rolreplication AS replication,
             ARRAY(SELECT DISTINCT g.rolname::text FROM pg_catalog.pg_auth_members am
               JOIN pg_catalog.pg_roles g ON g.oid = am.roleid WHERE am.member = r.oid ORDER BY 1) AS member_of
      FROM reach JOIN pg_catalog.pg_roles r ON r.oid = reach.oid
      ORDER BY r.rolname`.execute(this.db);
    return result.rows;
  }
}
