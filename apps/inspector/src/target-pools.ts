// A bounded LRU of connection pools, one per target connection (URL or params + setRole): inspection of
// the same database reuses a warm session; the least recently used pool is closed when the bound is hit. Per
// PostgreSQL server (host:port) at most INSPECT_SERVER_SESSIONS inspections run and as many pools stay open,
// so the databases of one server never hold more of its sessions than that, warm idle ones included.
import { createHash } from 'node:crypto';
import {
  openConnection,
  serverKey,
  type CatalogConnection,
  type ConnectionSpec,
  type DatabaseTls,
  type WorkloadIdentity,
} from '@rolepolicy/catalog';
import { KeyedSlots } from '@rolepolicy/runtime';

/**
 * Sessions per pooled target: one inspection is one transaction on one session, and a second inspection of the
 * same database at once takes its turn (tens of ms). One session per pool makes a server's sessions at most its
 * open pools, which INSPECT_SERVER_SESSIONS bounds (two per pool made a server's warm sessions twice that).
 */
const CONNECTIONS_PER_TARGET = 1;

/** Inspections per server and pools kept per server when nothing configures it (INSPECT_SERVER_SESSIONS). */
export const DEFAULT_SERVER_SESSIONS = 32;

/** The per-server bound of {@link TargetPools}. */
export interface ServerLimits {
  /** Inspections at once and pools kept open per server (host:port), INSPECT_SERVER_SESSIONS. */
  readonly sessions?: number;
  /**
   * Runs an inspection once its server has room: the responder's INSPECT_CONCURRENCY slots, taken after the
   * server's so that a busy server's waiters never hold the slots other servers' inspections need.
   */
  readonly admit?: <T>(task: () => Promise<T>) => Promise<T>;
  /** Told how long an inspection waited for its server (milliseconds). */
  readonly observeWait?: (ms: number) => void;
}

/**
 * Key of a target. Hashed so the map never holds a second copy of the password as a readable key;
 * a changed password yields a new pool, and the stale one ages out.
 */
function targetKey(spec: ConnectionSpec, namespace: string | null): string {
  const shape: unknown[] =
    'url' in spec
      ? ['url', spec.url, spec.setRole ?? null]
      : [
          'params',
          spec.params.host,
          spec.params.port ?? 5432,
          spec.params.dbname,
          spec.params.username ?? null,
          spec.params.password ?? null,
          spec.params.sslMode ?? null,
          spec.setRole ?? null,
          spec.params.auth ?? null,
          // The operator's cloud identity bounds may differ per namespace: a pool is never shared across them.
          spec.params.auth == null ? null : namespace,
        ];
  // Which parts came from which Secret labels the pool's error messages: another labelling, another pool.
  shape.push(spec.secretSources ?? null);
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex');
}

/** The LRU of target pools; `close()` ends every pool (service shutdown). */
export class TargetPools {
  // Map iteration order is insertion order: re-inserting on use keeps the oldest first.
  private readonly pools = new Map<string, CatalogConnection>();
  /** Inspections running on each pool; an evicted pool in use is closed by its last user. */
  private readonly users = new Map<CatalogConnection, number>();
  private readonly retired = new Set<CatalogConnection>();
  /** The server of each pool, open or retired, until it is closed. */
  private readonly serverOf = new Map<CatalogConnection, string>();
  /** Per server: pools not closed yet (open, retired, closing), and the closes under way. */
  private readonly onServer = new Map<string, { open: number; readonly closing: Set<Promise<void>> }>();
  private readonly servers: KeyedSlots;
  private readonly serverSessions: number;

  constructor(
    private readonly maxPools: number,
    private readonly applicationName = 'rolepolicy-inspector',
    /** Token provider for targets with `params.auth` (CLOUD_IDENTITY_PROVIDER); null refuses them. */
    private readonly identity: WorkloadIdentity | null = null,
    /** CAs trusted for verify-ca/verify-full besides Node's roots (DATABASE_TLS_CA_FILE). */
    private readonly tls: DatabaseTls = {},
    private readonly limits: ServerLimits = {},
  ) {
    this.serverSessions = limits.sessions ?? DEFAULT_SERVER_SESSIONS;
    this.servers = new KeyedSlots(this.serverSessions);
  }

  /** Pools not closed yet on the server `spec` points at (tests). */
  poolsOn(spec: ConnectionSpec): number {
    return this.onServer.get(serverKey(spec))?.open ?? 0;
  }

  /** Number of open pools (for metrics and tests). */
  get size(): number {
    return this.pools.size;
  }

  /** The pool of `spec`, opened on first use; evicts the least recently used pool beyond the bound. */
  acquire(spec: ConnectionSpec, namespace: string | null = null): CatalogConnection {
    const key = targetKey(spec, namespace);
    const existing = this.pools.get(key);
    if (existing) {
      this.pools.delete(key);
      this.pools.set(key, existing);
      return existing;
    }
    const connection = openConnection(
      { ...spec, maxConnections: CONNECTIONS_PER_TARGET, applicationName: this.applicationName },
      { identity: this.identity, tls: this.tls, namespace },
    );
    this.pools.set(key, connection);
    const server = serverKey(spec);
    this.serverOf.set(connection, server);
    this.server(server).open += 1;
    while (this.pools.size > this.maxPools) {
      const oldest = this.pools.keys().next().value;
      if (oldest === undefined) break;
      this.evictKey(oldest);
    }
    return connection;
  }

  /**
   * Runs `fn` on the pool of `spec`. While it runs, the pool is never closed: an eviction (the bound
   * reached by other targets) only forgets it, and the last user closes it. Closing a pool whose
   * inspection has not got its connection yet failed that inspection.
   */
  async use<T>(
    spec: ConnectionSpec,
    namespace: string | null,
    fn: (connection: CatalogConnection) => Promise<T>,
  ): Promise<T> {
    const server = serverKey(spec);
    const queued = performance.now();
    // Waits unconnected for one of the server's INSPECT_SERVER_SESSIONS slots, then for an admission.
    return this.servers.run(server, () => {
      this.limits.observeWait?.(performance.now() - queued);
      return (this.limits.admit ?? ((task) => task()))(async () => {
        if (!this.pools.has(targetKey(spec, namespace))) await this.makeRoom(server);
        const connection = this.acquire(spec, namespace);
        this.users.set(connection, (this.users.get(connection) ?? 0) + 1);
        try {
          return await fn(connection);
        } finally {
          const left = (this.users.get(connection) ?? 1) - 1;
          if (left > 0) {
            this.users.set(connection, left);
          } else {
            this.users.delete(connection);
            // Closed before the server's slot is given back: the next inspection's session finds room.
            if (this.retired.delete(connection)) await this.closePool(connection);
          }
        }
      });
    });
  }

  /**
   * Closes pools of `server` no inspection uses, least recently used first, until a new one fits its bound.
   * One always can: an inspection holds a slot of the server before it asks, so at most the bound less one
   * other inspections use a pool of it.
   */
  private async makeRoom(server: string): Promise<void> {
    for (;;) {
      const entry = this.server(server);
      if (entry.open < this.serverSessions) return;
      const idle = [...this.pools.entries()].find(
        ([, pool]) => this.serverOf.get(pool) === server && !this.users.has(pool),
      );
      if (idle !== undefined) {
        this.pools.delete(idle[0]);
        await this.closePool(idle[1]);
      } else if (entry.closing.size > 0) await Promise.race(entry.closing);
      else return;
    }
  }

  private server(server: string): { open: number; readonly closing: Set<Promise<void>> } {
    let entry = this.onServer.get(server);
    if (entry === undefined) {
      entry = { open: 0, closing: new Set() };
      this.onServer.set(server, entry);
    }
    return entry;
  }

  /** Closes a pool and counts it off its server once its session is gone. */
  private async closePool(connection: CatalogConnection): Promise<void> {
    const server = this.serverOf.get(connection);
    this.serverOf.delete(connection);
    const closed = connection.close().catch(() => undefined);
    if (server === undefined) return closed;
    const entry = this.server(server);
    entry.closing.add(closed);
    await closed;
    entry.closing.delete(closed);
    entry.open -= 1;
    if (entry.open <= 0 && entry.closing.size === 0) this.onServer.delete(server);
  }

  /** Closes and forgets the pool of `spec` (e.g. after its credentials were refused). */
  evict(spec: ConnectionSpec, namespace: string | null = null): void {
    this.evictKey(targetKey(spec, namespace));
  }

  /** Closes every pool. */
  async close(): Promise<void> {
    const all = [...this.pools.values(), ...this.retired];
    this.pools.clear();
    this.retired.clear();
    await Promise.allSettled(all.map((connection) => this.closePool(connection)));
  }

  private evictKey(key: string): void {
    const connection = this.pools.get(key);
    if (!connection) return;
    this.pools.delete(key);
    if (this.users.has(connection)) {
      this.retired.add(connection);
      return;
    }
    void this.closePool(connection);
  }
}
