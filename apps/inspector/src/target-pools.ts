// A bounded LRU of connection pools, one per target connection (URL or params + setRole): inspection of
// the same database reuses warm connections; the least recently used pool is closed when the bound is hit.
import { createHash } from 'node:crypto';
import {
  openConnection,
  type CatalogConnection,
  type ConnectionSpec,
  type DatabaseTls,
  type WorkloadIdentity,
} from '@rolepolicy/catalog';

/** Connections per pooled target: one inspection runs in one transaction, a second serves concurrency. */
const CONNECTIONS_PER_TARGET = 2;

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

  constructor(
    private readonly maxPools: number,
    private readonly applicationName = 'rolepolicy-inspector',
    /** Token provider for targets with `params.auth` (CLOUD_IDENTITY_PROVIDER); null refuses them. */
    private readonly identity: WorkloadIdentity | null = null,
    /** CAs trusted for verify-ca/verify-full besides Node's roots (DATABASE_TLS_CA_FILE). */
    private readonly tls: DatabaseTls = {},
  ) {}

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
        if (this.retired.delete(connection)) void connection.close().catch(() => undefined);
      }
    }
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
    await Promise.allSettled(all.map((connection) => connection.close()));
  }

  private evictKey(key: string): void {
    const connection = this.pools.get(key);
    if (!connection) return;
    this.pools.delete(key);
    if (this.users.has(connection)) {
      this.retired.add(connection);
      return;
    }
    void connection.close().catch(() => undefined);
  }
}
