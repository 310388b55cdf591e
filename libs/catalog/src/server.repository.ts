// Reads server facts: version number, current database, and the physical identity of the cluster.
// The identity read may fail on managed services; only 42883/42501 mean "unavailable".

import { sql, type Kysely } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';

/** Version and database name. */
export interface ServerRow {
  readonly server_version_num: number;
  readonly current_database: string;
}

/** Server-level reads. */
export class ServerRepository {
  constructor(private readonly db: Kysely<PgCatalog>) {}

  /** `server_version_num` and `current_database()`. */
  async server(): Promise<ServerRow> {
    const result = await sql<ServerRow>`
      SELECT pg_catalog.current_setting('server_version_num')::int AS server_version_num,
             pg_catalog.current_database()::text AS current_database`.execute(this.db);
    return result.rows[0]!;
  }

  /** `pg_control_system().system_identifier` as an unsigned decimal string (it is stored as int8). */
  async systemIdentifier(): Promise<string> {
    const result = await sql<{ physical: string }>`
      SELECT CASE WHEN system_identifier < 0
                  THEN (system_identifier::numeric + 18446744073709551616)::text
                  ELSE system_identifier::text END AS physical
      FROM pg_catalog.pg_control_system()`.execute(this.db);
    return result.rows[0]!.physical;
  }
}
