// The fleet benchmarks' databases: created from one template (the fleet policy's schemas and relations),
// dropped with every role of the run's prefix. They live on one server (the bench server) or, given several
// servers' admin URLs, spread over them round-robin: database k on server k mod N, one template per server.
import type { CoreV1Api } from '@kubernetes/client-node';
import pg from 'pg';
import { sandboxId } from '@rolepolicy/testing';

import { FLEET_TEMPLATE_SQL } from './fleet-policy.js';
import { BENCH_ADMIN_URL, vacuumSharedCatalogs } from './pg-bench-support.js';

/** URL of `database` on the server whose admin URL is `adminUrl`. */
function urlOn(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The benchmark's databases: created from one template, dropped with every role of the run's prefix. */
export class FleetDatabases {
  readonly id = sandboxId();
  readonly names: string[] = [];
  readonly rolePrefix = `rp_fleet_${this.id}_`;
  private readonly template = `rp_test_fleettpl_${this.id}`;

  /** `servers`: admin URLs of the servers the databases spread over (default: the bench server alone). */
  constructor(readonly servers: readonly string[] = [BENCH_ADMIN_URL]) {
    if (servers.length === 0) throw new Error('FleetDatabases needs at least one server');
  }

  /** Admin URL of the server database `k` lives on. */
  serverOf(k: number): string {
    return this.servers[k % this.servers.length]!;
  }

  /** Connection URL of database `k`. */
  url(k: number): string {
    return urlOn(this.serverOf(k), this.names[k]!);
  }

  async create(count: number): Promise<void> {
    await Promise.all(
      this.servers.map(async (server) => {
        await this.admin(server, async (c) => {
          await c.query(`CREATE DATABASE "${this.template}"`);
        });
        const tpl = new pg.Client({ connectionString: urlOn(server, this.template) });
        await tpl.connect();
        await tpl.query(FLEET_TEMPLATE_SQL).finally(() => tpl.end());
      }),
    );
    const first = this.names.length;
    for (let i = first; i < count; i++) this.names.push(`rp_test_fleet_${this.id}_${i}`);
    // One admin session per server, the servers side by side.
    await Promise.all(
      this.servers.map((server, s) =>
        this.admin(server, async (c) => {
          for (let i = first; i < count; i++) {
            if (i % this.servers.length !== s) continue;
            await c.query(`CREATE DATABASE "${this.names[i]!}" TEMPLATE "${this.template}"`);
          }
        }),
      ),
    );
  }

  /** A Secret `db-<k>` with the connection URL of database k, for each of `indexes` (default: all). */
  async createSecrets(
    core: CoreV1Api,
    namespace: string,
    indexes: readonly number[] = this.names.map((_, k) => k),
  ): Promise<void> {
    for (let i = 0; i < indexes.length; i += 50) {
      await Promise.all(
        indexes.slice(i, i + 50).map((k) =>
          core.createNamespacedSecret({
            namespace,
            body: {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: `db-${k}`, namespace },
              type: 'Opaque',
              stringData: { DATABASE_URL: this.url(k) },
            },
          }),
        ),
      );
    }
  }

  /**
   * Drops and recreates every database and the run's roles, so each stage meets the catalog the first one
   * met: roles are cluster-wide, and thousands left by an earlier stage slow every later inspection. The
   * dropped stage's dead rows in the shared catalogs are vacuumed away too, for the same reason.
   */
  async reset(): Promise<void> {
    const count = this.names.length;
    await this.dispose();
    for (const server of this.servers) {
      const { deadBefore, ms } = await vacuumSharedCatalogs(server);
      console.log(`  shared catalogs: ${deadBefore} dead rows vacuumed after the stage (${ms} ms)`);
    }
    this.names.length = 0;
    await this.create(count);
  }

  /**
   * Sessions and transactions so far in the first `count` databases (pg_stat_database, PostgreSQL 14+), summed
   * over the servers. Sessions on a server's `postgres` database (the executors' role lock, ADR 0027) are
   * counted apart: they serve every database of the server.
   */
  async activity(
    count: number,
  ): Promise<{ sessions: number; transactions: number; roleLockSessions: number }> {
    const names = this.names.slice(0, count);
    const perServer = await Promise.all(
      this.servers.map((server) =>
        this.admin(server, async (c) => {
          const { rows } = await c.query<{
            sessions: string | null;
            transactions: string | null;
            lock: string | null;
          }>(
            `SELECT sum(sessions) FILTER (WHERE datname = ANY($1)) AS sessions,
                    sum(xact_commit + xact_rollback) FILTER (WHERE datname = ANY($1)) AS transactions,
                    sum(sessions) FILTER (WHERE datname = 'postgres') AS lock
               FROM pg_catalog.pg_stat_database`,
            [names],
          );
          return {
            sessions: Number(rows[0]?.sessions ?? 0),
            transactions: Number(rows[0]?.transactions ?? 0),
            roleLockSessions: Number(rows[0]?.lock ?? 0),
          };
        }),
      ),
    );
    return {
      sessions: perServer.reduce((n, s) => n + s.sessions, 0),
      transactions: perServer.reduce((n, s) => n + s.transactions, 0),
      roleLockSessions: perServer.reduce((n, s) => n + s.roleLockSessions, 0),
    };
  }

  /**
   * Samples every server's client sessions (pg_stat_activity) every `everyMs` until `stop()`, which answers the
   * most each server had at once, in the order of {@link servers}: what a per-server `max_connections` meets.
   */
  sampleSessions(everyMs = 500): { stop: () => Promise<number[]> } {
    const peaks = this.servers.map(() => 0);
    const clients = this.servers.map((server) => new pg.Client({ connectionString: server }));
    let running = true;
    const loop = (async () => {
      await Promise.all(clients.map((c) => c.connect()));
      while (running) {
        await Promise.all(
          clients.map(async (c, s) => {
            const { rows } = await c.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_catalog.pg_stat_activity
                WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
            );
            peaks[s] = Math.max(peaks[s]!, rows[0]?.n ?? 0);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop.catch(() => undefined);
        await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
        return peaks;
      },
    };
  }

  async dispose(): Promise<void> {
    await Promise.all(
      this.servers.map((server, s) =>
        this.admin(server, async (c) => {
          const own = this.names.filter((_, i) => i % this.servers.length === s);
          for (const name of [...own, this.template]) {
            await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
          }
          const { rows } = await c.query<{ rolname: string }>(
            'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
            [this.rolePrefix],
          );
          for (const { rolname } of rows)
            await c.query(`DROP ROLE IF EXISTS "${rolname}"`).catch(() => undefined);
        }),
      ),
    );
  }

  private async admin<T>(server: string, body: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: server });
    await c.connect();
    try {
      return await body(c);
    } finally {
      await c.end();
    }
  }
}
