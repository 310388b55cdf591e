// Reads schemas, their owners and the owner's own CREATE/USAGE from the (possibly default) schema ACL.
// has_schema_privilege is not used: it is always true for a superuser owner, even after a REVOKE.

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';
import { inTextArray, userById } from './sql-fragments.js';

/** A schema with its owner and the privilege words the owner holds on it. */
export interface SchemaRow {
  readonly name: string;
  readonly owner: string;
  readonly owner_privileges: string[];
}

/** Schema reads over pg_namespace. */
export class SchemaRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** The named schemas that exist, each with the owner's entry of COALESCE(nspacl, acldefault('n', owner)). */
  async findSchemas(names: readonly string[]): Promise<SchemaRow[]> {
    return this.db
      .selectFrom('pg_catalog.pg_namespace as n')
      .select([
        'n.nspname as name',
        userById('n.nspowner').as('owner'),
        sql<string[]>`ARRAY(
          SELECT a.privilege_type
          FROM pg_catalog.aclexplode(COALESCE(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
          WHERE a.grantee = n.nspowner
          ORDER BY a.privilege_type)`.as('owner_privileges'),
      ])
      .where(inTextArray('n.nspname', names))
      .orderBy('n.nspname')
      .execute();
  }
}
