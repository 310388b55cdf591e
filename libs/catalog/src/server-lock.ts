// The server's role lock (ADR 0027). Roles and memberships are server-wide, but PostgreSQL scopes advisory
// locks to the current database, so two executions on two databases of one server never meet on the
// per-database lock. The role lock is an advisory lock held by a session on the server's maintenance
// database (`postgres` unless configured): one database every login of the server can normally reach.
import { sql } from 'kysely';
import { canonicalJson, sha256Digest } from '@rolepolicy/policy';

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
 * execution then behaves as before ADR 0027 (a collision is redelivered). `brokenSession` is called when the
 * locks could not be released on a session that may still be open (a kept pool must then drop it).
 */
export function maintenanceLock(
  connection: CatalogConnection,
  unavailable: (sqlState: string) => void,
  brokenSession?: () => void,
): ServerLock {
  return {
    async around<T>(task: () => Promise<T>, roles: readonly string[]): Promise<T> {
      let held = false;
      try {
        return await withRedaction(connection, () =>
          connection.db.connection().execute(async (session) => {
            try {
              // In one order (sorted names) everywhere, one at a time: two executions never hold each
              // other's next lock (no deadlock between them).
              for (const role of [...new Set(roles)].sort()) {
                await sql`SELECT pg_catalog.pg_advisory_lock(${roleLockKey(role)})`.execute(session);
                held = true;
              }
              held = true;
              return await task();
            } finally {
              // Every lock this session took, also when a later one timed out: a kept session goes back to
              // its pool holding none. A failed unlock means a broken session (whose end released the locks)
              // or one that must not be used again: `brokenSession` discards it.
              await sql`SELECT pg_catalog.pg_advisory_unlock_all()`
                .execute(session)
                .catch(() => brokenSession?.());
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

/** Options of {@link RoleLockSessions}. */
export interface RoleLockSessionsOptions {
  /** Called when a login cannot use the maintenance database (see {@link maintenanceLock}). */
  readonly unavailable: (database: string, sqlState: string) => void;
  /** Sessions kept per server and login at most (default 8): more executions at once wait for one. */
  readonly maxSessions?: number;
  /** A server and login's pool unused this long is closed (default 60 s); its idle sessions close after 10 s. */
  readonly idleMs?: number;
}

/** One pool of lock sessions and how many executions use it now. */
interface KeptPool {
  readonly connection: CatalogConnection;
  readonly lock: ServerLock;
  users: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Role-lock sessions kept between executions, one pool per server, login and namespace (ADR 0027, amended
 * 2026-11-28): an execution with role DDL borrows a session that already exists instead of starting a backend
 * on the maintenance database for itself. A session holds the locks of one execution at a time (advisory locks
 * are per session, so two executions must never share one while locked) and goes back to its pool holding
 * none; a session whose unlock failed is never lent again (its pool is closed and replaced).
 *
 * Pools are keyed by a digest of the whole connection (credentials included, never kept in clear beyond the
 * pool itself; the Secret names its parts came from left out) and the namespace the operator's cloud identity
 * bounds are judged for: only an execution that would open exactly the same session gets it.
 */
export class RoleLockSessions {
  private readonly pools = new Map<string, KeptPool>();

  constructor(private readonly options: RoleLockSessionsOptions) {}

  /**
   * The role lock of the server `spec` connects to, held in `database`, through a kept session; `release`
   * when the execution is done with it (after its commit).
   */
  acquire(
    spec: ConnectionSpec,
    database: string,
    open: OpenOptions,
  ): { readonly lock: ServerLock; release(): void } {
    // Which Secret each part came from only labels redactions: policies whose Secrets hold the same
    // connection share its sessions. Their callers redact what leaves the lock with their own labels
    // (executeUnderLock runs inside withRedaction of the execution's connection); the pool redacts the
    // URL and password itself.
    const { secretSources: _labels, ...connection } = maintenanceSpec(spec, database);
    const key = sha256Digest(canonicalJson({ spec: connection, namespace: open.namespace ?? null }));
    let pool = this.pools.get(key);
    if (pool === undefined) pool = this.openPool(key, connection, database, open);
    const kept = pool;
    kept.users++;
    if (kept.timer !== undefined) clearTimeout(kept.timer);
    kept.timer = undefined;
    let released = false;
    return {
      lock: kept.lock,
      release: () => {
        if (released) return;
        released = true;
        kept.users--;
        if (kept.users > 0 || this.pools.get(key) !== kept) return;
        kept.timer = setTimeout(() => {
          if (kept.users === 0 && this.pools.get(key) === kept) void this.drop(key, kept);
        }, this.options.idleMs ?? 60_000);
        kept.timer.unref();
      },
    };
  }

  /** Closes every kept session (the executor's shutdown). */
  async close(): Promise<void> {
    const all = [...this.pools.entries()];
    this.pools.clear();
    await Promise.all(all.map(([key, pool]) => this.drop(key, pool)));
  }

  /** Pools kept now, one per server, login and namespace. */
  get size(): number {
    return this.pools.size;
  }

  private openPool(key: string, spec: ConnectionSpec, database: string, open: OpenOptions): KeptPool {
    const connection = openConnection(
      {
        ...spec,
        maxConnections: this.options.maxSessions ?? 8,
        applicationName: 'rolepolicy-executor-role-lock',
      },
      open,
    );
    const pool: KeptPool = {
      connection,
      users: 0,
      timer: undefined,
      lock: maintenanceLock(
        connection,
        (state) => this.options.unavailable(database, state),
        // Locks possibly still held by a live session: nothing may borrow from this pool again. Executions
        // using it finish; its sessions close as they come back (the pool is ending).
        () => {
          if (this.pools.get(key) === pool) void this.drop(key, pool);
        },
      ),
    };
    this.pools.set(key, pool);
    return pool;
  }

  private async drop(key: string, pool: KeptPool): Promise<void> {
    if (this.pools.get(key) === pool) this.pools.delete(key);
    if (pool.timer !== undefined) clearTimeout(pool.timer);
    await pool.connection.close().catch(() => undefined);
  }
}
