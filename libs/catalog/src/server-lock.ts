// The server's role lock (ADR 0027). Roles and memberships are server-wide, but PostgreSQL scopes advisory
// locks to the current database, so two executions on two databases of one server never meet on the
// per-database lock. The role lock is an advisory lock held by a session on the server's maintenance
// database (`postgres` unless configured): one database every login of the server can normally reach.
import { sql } from 'kysely';

import {
  openConnection,
  withRedaction,
  type CatalogConnection,
  type ConnectionSpec,
  type OpenOptions,
} from './connection.js';
import type { ServerLock } from './execute.js';
import { errorCode } from './redaction.js';

/** One key per role name: the maintenance database is the server's, so the key need not name the server. */
const roleLockKey = (role: string) =>
  sql<bigint>`pg_catalog.hashtextextended('rolepolicy:role:' || ${role}, 0)`;

/**
 * The login cannot use the maintenance database at all: no such database (3D000), no CONNECT privilege
 * (42501), refused by pg_hba or authentication (28000, 28P01). Anything else (a timeout, a dead server) is
 * the execution's failure.
 */
const UNUSABLE = new Set(['3D000', '42501', '28000', '28P01']);

/** `spec` pointed at `database` on the same server, with the same login, TLS and settings. */
export function maintenanceSpec(spec: ConnectionSpec, database: string): ConnectionSpec {
  if ('params' in spec) return { ...spec, params: { ...spec.params, dbname: database } };
  const url = new URL(spec.url);
  url.pathname = `/${encodeURIComponent(database)}`;
  url.searchParams.delete('dbname');
  return { ...spec, url: url.toString() };
}

/**
 * A {@link ServerLock} held through `connection` (a pool on the maintenance database). When the login cannot
 * use that database, `around` runs the task without the lock and calls `unavailable` with the SQLSTATE: the
 * execution then behaves as before ADR 0027 (a collision is redelivered).
 */
export function maintenanceLock(
  connection: CatalogConnection,
  unavailable: (sqlState: string) => void,
): ServerLock {
  return {
    async around<T>(task: () => Promise<T>, roles: readonly string[]): Promise<T> {
      let held = false;
      try {
        return await withRedaction(connection, () =>
          connection.db.connection().execute(async (session) => {
            // In one order (sorted names) everywhere, one at a time: two executions never hold each
            // other's next lock (no deadlock between them).
            for (const role of [...new Set(roles)].sort()) {
              await sql`SELECT pg_catalog.pg_advisory_lock(${roleLockKey(role)})`.execute(session);
              held = true;
            }
            held = true;
            try {
              return await task();
            } finally {
              // The session is this lock's alone. A failed unlock means a broken session, whose end released
              // the locks.
              await sql`SELECT pg_catalog.pg_advisory_unlock_all()`.execute(session).catch(() => undefined);
            }
          }),
        );
      } catch (error) {
        const state = errorCode(error);
        if (held || state === null || !UNUSABLE.has(state)) throw error;
        unavailable(state);
        return task();
      }
    },
  };
}

/** Opens the pool {@link maintenanceLock} holds its lock through: one session, nothing connects until used. */
export function openMaintenanceConnection(
  spec: ConnectionSpec,
  database: string,
  options: OpenOptions,
): CatalogConnection {
  return openConnection(
    {
      ...maintenanceSpec(spec, database),
      maxConnections: 1,
      applicationName: 'rolepolicy-executor-role-lock',
    },
    options,
  );
}
