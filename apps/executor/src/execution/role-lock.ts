// The server's role lock for one execution (ADR 0027): a pool on the server's maintenance database, opened
// with the execution's own login and connected only when the plan carries role or membership DDL.
import { Logger } from '@nestjs/common';
import {
  maintenanceLock,
  openMaintenanceConnection,
  type ConnectionSpec,
  type OpenOptions,
  type ServerLock,
} from '@rolepolicy/catalog';

/** The maintenance database the role lock is held in, unless {@link ExecutionOptions.roleLockDatabase} says. */
export const DEFAULT_ROLE_LOCK_DATABASE = 'postgres';

const logger = new Logger('RoleLock');

/** A role lock for one execution and its release; `lock` undefined when disabled (`database` null). */
export interface RoleLock {
  readonly lock: ServerLock | undefined;
  close(): Promise<void>;
}

/**
 * The role lock of the server `spec` connects to. When the login cannot use the maintenance database the
 * execution runs without it (logged; a collision is then redelivered as before).
 */
export function roleLockFor(spec: ConnectionSpec, options: OpenOptions, database: string | null): RoleLock {
  if (database === null) return { lock: undefined, close: async () => undefined };
  const connection = openMaintenanceConnection(spec, database, options);
  const lock = maintenanceLock(connection, (sqlState) =>
    logger.warn(
      `role and membership DDL runs without the server's role lock: the login cannot use database ` +
        `"${database}" (SQLSTATE ${sqlState}); a collision with another database of the server is redelivered`,
    ),
  );
  return { lock, close: () => connection.close().catch(() => undefined) };
}
