// Reads membership rows (pg_auth_members) whose granted role is managed or a named pg_* grantor role.
// PostgreSQL 16+ has per-edge inherit and several grantor rows per edge; older servers use rolinherit.

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';
import { inTextArray } from './sql-fragments.js';

/** One pg_auth_members row; `grantor_is_bootstrap` marks rows granted by the bootstrap superuser (OID 10). */
export interface MembershipRow {
  readonly role: string;
  readonly member: string;
  readonly inherit: boolean;
  readonly admin: boolean;
  readonly grantor: string | null;
  readonly grantor_is_bootstrap: boolean;
}

/** Membership reads; the per-edge inherit column is chosen by server version, not by probing. */
export class MembershipRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** Every row whose granted role is in `grantedRoles`; members may be any role. */
  async findMemberships(grantedRoles: readonly string[], serverVersionNum: number): Promise<MembershipRow[]> {
    const inherit = serverVersionNum >= 160000 ? sql<boolean>`am.inherit_option` : sql<boolean>`m.rolinherit`;
    return this.db
      .selectFrom('pg_catalog.pg_auth_members as am')
      .innerJoin('pg_catalog.pg_roles as g', 'g.oid', 'am.roleid')
      .innerJoin('pg_catalog.pg_roles as m', 'm.oid', 'am.member')
      .leftJoin('pg_catalog.pg_roles as gr', 'gr.oid', 'am.grantor')
      .select([
        'g.rolname as role',
        'm.rolname as member',
        inherit.as('inherit'),
        'am.admin_option as admin',
        'gr.rolname as grantor',
        sql<boolean>`am.grantor = 10`.as('grantor_is_bootstrap'),
      ])
      .where(inTextArray('g.rolname', grantedRoles))
      .orderBy('g.rolname')
      .orderBy('m.rolname')
      .orderBy('gr.rolname')
      .execute();
  }
}
