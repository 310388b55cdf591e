// The fleet benchmarks' databases: created from one template (the fleet policy's schemas and relations),
// dropped with every role of the run's prefix.
import type { CoreV1Api } from '@kubernetes/client-node';
import pg from 'pg';
import { sandboxId } from '@rolepolicy/testing';

import { FLEET_TEMPLATE_SQL } from './fleet-policy.js';
import { BENCH_ADMIN_URL, databaseUrl } from './pg-bench-support.js';

/** The benchmark's databases: created from one template, dropped with every role of the run's prefix. */
export class FleetDatabases {
  readonly id = sandboxId();
  readonly names: string[] = [];
  readonly rolePrefix = `rp_fleet_${this.id}_`;
  private readonly template = `rp_test_fleettpl_${this.id}`;

  async create(count: number): Promise<void> {
    await this.admin(async (c) => {
      await c.query(`CREATE DATABASE "${this.template}"`);
    });
    const tpl = new pg.Client({ connectionString: databaseUrl(this.template) });
    await tpl.connect();
    await tpl.query(FLEET_TEMPLATE_SQL).finally(() => tpl.end());
    await this.admin(async (c) => {
      for (let i = this.names.length; i < count; i++) {
        const name = `rp_test_fleet_${this.id}_${i}`;
        await c.query(`CREATE DATABASE "${name}" TEMPLATE "${this.template}"`);
        this.names.push(name);
      }
    });
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
              stringData: { DATABASE_URL: databaseUrl(this.names[k]!) },
            },
          }),
        ),
      );
    }
  }

  /**
   * Drops and recreates every database and the run's roles, so each stage meets the catalog the first one
   * met: roles are cluster-wide, and thousands left by an earlier stage slow every later inspection.
   */
  async reset(): Promise<void> {
    const count = this.names.length;
    await this.dispose();
    this.names.length = 0;
    await this.create(count);
  }

  /** Sessions and transactions so far in the first `count` databases (pg_stat_database, PostgreSQL 14+). */
  async activity(count: number): Promise<{ sessions: number; transactions: number }> {
    let out = { sessions: 0, transactions: 0 };
    await this.admin(async (c) => {
      const { rows } = await c.query<{ sessions: string | null; transactions: string | null }>(
        `SELECT sum(sessions) AS sessions, sum(xact_commit + xact_rollback) AS transactions
           FROM pg_catalog.pg_stat_database WHERE datname = ANY($1)`,
        [this.names.slice(0, count)],
      );
      out = { sessions: Number(rows[0]?.sessions ?? 0), transactions: Number(rows[0]?.transactions ?? 0) };
    });
    return out;
  }

  async dispose(): Promise<void> {
    await this.admin(async (c) => {
      for (const name of [...this.names, this.template]) {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      }
      const { rows } = await c.query<{ rolname: string }>(
        'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
        [this.rolePrefix],
      );
      for (const { rolname } of rows)
        await c.query(`DROP ROLE IF EXISTS "${rolname}"`).catch(() => undefined);
    });
  }

  private async admin(body: (c: pg.Client) => Promise<void>): Promise<void> {
    const c = new pg.Client({ connectionString: BENCH_ADMIN_URL });
    await c.connect();
    try {
      await body(c);
    } finally {
      await c.end();
    }
  }
}
