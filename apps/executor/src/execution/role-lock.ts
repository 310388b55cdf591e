// The server's role lock for one execution (ADR 0027): an advisory lock in the server's maintenance database,
// taken with the execution's own login only when the plan carries role or membership DDL, through a session
// kept between executions (RoleLockSessions: no backend start per execution).
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  maintenanceLock,
  openMaintenanceConnection,
  RoleLockSessions,
  type ConnectionSpec,
  type OpenOptions,
  type ServerLock,
} from '@rolepolicy/catalog';

/** The maintenance database the role lock is held in, unless {@link ExecutionOptions.roleLockDatabase} says. */
export const DEFAULT_ROLE_LOCK_DATABASE = 'postgres';

/** The maintenance database of the role lock: the option's, the default when unset, null when turned off. */
export function roleLockDatabaseOf(option: string | null | undefined): string | null {
  return option === undefined ? DEFAULT_ROLE_LOCK_DATABASE : option;
}

/** Injection token of the executor's kept role-lock sessions (one {@link RoleLockSessions} per replica). */
export const ROLE_LOCK_SESSIONS = Symbol('rp.executor.role-lock-sessions');

const logger = new Logger('RoleLock');

function warnUnavailable(database: string, sqlState: string): void {
  logger.warn(
    `role and membership DDL runs without the server's role lock: the login cannot use database ` +
      `"${database}" (SQLSTATE ${sqlState}); a collision with another database of the server is redelivered`,
  );
}

/** The replica's kept role-lock sessions; closed at shutdown. */
export function roleLockSessions(): RoleLockSessions {
  return new RoleLockSessions({ unavailable: warnUnavailable });
}

/** Closes the kept role-lock sessions when the executor stops (after the last execution was drained). */
@Injectable()
export class RoleLockSessionsShutdown implements OnApplicationShutdown {
  constructor(@Inject(ROLE_LOCK_SESSIONS) private readonly sessions: RoleLockSessions) {}

  async onApplicationShutdown(): Promise<void> {
    await this.sessions.close();
  }
}

/** A role lock for one execution and its release; `lock` undefined when disabled (`database` null). */
export interface RoleLock {
  readonly lock: ServerLock | undefined;
  close(): Promise<void>;
}

/**
 * The role lock of the server `spec` connects to. When the login cannot use the maintenance database the
 * execution runs without it (logged; a collision is then redelivered as before). With `sessions`, the lock is
 * held through a kept session of that server and login; without, through a session of its own, closed by
 * `close`.
 */
export function roleLockFor(
  spec: ConnectionSpec,
  options: OpenOptions,
  database: string | null,
  sessions?: RoleLockSessions | null,
): RoleLock {
  if (database === null) return { lock: undefined, close: async () => undefined };
  if (sessions != null) {
    const kept = sessions.acquire(spec, database, options);
    return { lock: kept.lock, close: async () => kept.release() };
  }
  const connection = openMaintenanceConnection(spec, database, options);
  const lock = maintenanceLock(connection, (sqlState) => warnUnavailable(database, sqlState));
  return { lock, close: () => connection.close().catch(() => undefined) };
}
