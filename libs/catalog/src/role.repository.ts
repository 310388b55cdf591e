// Reads role attributes (pg_roles + role comments from pg_shdescription) for a list of role names.
// Also answers which names exist at all, and who the executor is (after any SET ROLE).

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';
import { inTextArray } from './sql-fragments.js';

/** One pg_roles row as inspection needs it; `valid_until` already normalised to UTC `...Z` (infinity: null). */
export interface RoleRow {
  readonly name: string;
  readonly superuser: boolean;
  readonly inherit: boolean;
  readonly createrole: boolean;
  readonly createdb: boolean;
  readonly login: boolean;
  readonly replication: boolean;
  readonly bypassrls: boolean;
  readonly connection_limit: number;
  readonly config: string[] | null;
  readonly valid_until: string | null;
  readonly comment: string | null;
}

/** The executor as the catalog sees it. */
export interface ExecutorRow {
  readonly role: string;
  readonly superuser: boolean;
  readonly createrole: boolean;
  readonly member_of: string[];
}

/** Role reads over pg_roles; every method is one array-bound query. */
export class RoleRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** Attributes and comments of the named roles that exist. */
  async findRoles(names: readonly string[]): Promise<RoleRow[]> {
    return this.db
      .selectFrom('pg_catalog.pg_roles as r')
      .leftJoin('pg_catalog.pg_shdescription as d', (join) =>
        join
          .onRef('d.objoid', '=', 'r.oid')
          .on('d.classoid', '=', sql<number>`'pg_catalog.pg_authid'::pg_catalog.regclass`),
      )
      .select([
        'r.rolname as name',
        'r.rolsuper as superuser',
        'r.rolinherit as inherit',
        'r.rolcreaterole as createrole',
        'r.rolcreatedb as createdb',
        'r.rolcanlogin as login',
        'r.rolreplication as replication',
        'r.rolbypassrls as bypassrls',
        'r.rolconnlimit as connection_limit',
        'r.rolconfig as config',
        sql<
          string | null
        >`pg_catalog.to_char(r.rolvaliduntil AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`.as(
          'valid_until',
        ),
        'd.description as comment',
      ])
      .where(inTextArray('r.rolname', names))
      .orderBy('r.rolname')
      .execute();
  }

  /** Which of the names exist in the cluster (managed or not). */
  async existingRoles(names: readonly string[]): Promise<string[]> {
    const rows = await this.db
      .selectFrom('pg_catalog.pg_roles as r')
      .select('r.rolname as name')
      .where(inTextArray('r.rolname', names))
      .orderBy('r.rolname')
      .execute();
    return rows.map((row) => row.name);
  }

  /** `current_user` with its superuser/createrole flags and every role it is a member of (transitively). */
  async executor(): Promise<ExecutorRow> {
    const row = await this.db
      .selectFrom('pg_catalog.pg_roles as r')
      .select([
        'r.rolname as role',
        'r.rolsuper as superuser',
        'r.rolcreaterole as createrole',
        // pg_has_role is true for every role when the executor is a superuser: the list would be the whole
        // cluster's roles in every snapshot, and no authority check reads it for a superuser.
        sql<string[]>`ARRAY(
          SELECT g.rolname::text FROM pg_catalog.pg_roles g
          WHERE NOT r.rolsuper AND g.oid <> r.oid AND pg_catalog.pg_has_role(r.oid, g.oid, 'MEMBER')
          ORDER BY g.rolname)`.as('member_of'),
      ])
      .where('r.rolname', '=', sql<string>`current_user`)
      .executeTakeFirstOrThrow();
    return row;
  }
}
