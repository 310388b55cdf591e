// Per-server limits (issue 28, "Several servers"): a replica runs at most EXECUTOR_SERVER_CONCURRENCY policy
// executions at once on one PostgreSQL server, whatever EXECUTOR_CONCURRENCY allows, so a fleet of databases on
// one small server (max_connections 6 here) never runs it out of connections; executions on another server
// run beside them and never wait for the first server's slots. Two real servers side by side, from the pinned
// embedded package. A sampler on each server counts the databases with an executor session every few ms.
import type { INestApplication } from '@nestjs/common';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import type { ExecuteResultV1 } from '@rolepolicy/contracts';
import {
  createNatsSandbox,
  createPostgresSandboxOn,
  eventually,
  freePort,
  sandboxId,
  startEmbeddedPostgresServer,
  type EmbeddedPostgres,
  type NatsSandbox,
} from '@rolepolicy/testing';
import {
  LOCK_LOG_DDL,
  approvedRequest,
  collectResults,
  executorTopology,
  publishRequest,
  startExecutor,
  type ExecutorTopology,
  type SecretStore,
} from './test-support/harness.js';

const SMALL_SERVER_DATABASES = 8;
const OTHER_SERVER_DATABASES = 2;
const SERVER_BOUND = 2;
/**
 * Sessions the small server accepts: SERVER_BOUND executions x (database session + role-lock session), the
 * sampler's, and one to spare. Without the bound, ten executions at once ask for up to twenty.
 */
const SMALL_MAX_CONNECTIONS = 6;
const run = sandboxId();

/** Per server, the databases with an executor session open, sampled on every server at once until stopped. */
class ExecutorSessions {
  /** One row per sample: the count of each server, in the order of the clients. */
  readonly samples: number[][] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly clients: readonly pg.Client[]) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.samples.push(
        await Promise.all(
          this.clients.map(async (client) => {
            const { rows } = await client.query<{ n: number }>(
              `SELECT count(DISTINCT datname)::int AS n FROM pg_catalog.pg_stat_activity
                WHERE application_name = 'rolepolicy-executor' AND datname <> 'postgres'`,
            );
            return rows[0]!.n;
          }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('executor: policy executions bounded per PostgreSQL server (EXECUTOR_SERVER_CONCURRENCY)', () => {
  let small: EmbeddedPostgres;
  let other: EmbeddedPostgres;
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let names: ExecutorTopology;
  let results: ExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  let app: INestApplication | undefined;
  let metricsUrl = '';
  const secrets: SecretStore = { connections: new Map(), passwords: new Map() };

  beforeAll(async () => {
    [small, other] = await Promise.all([
      startEmbeddedPostgresServer(15, { maxConnections: SMALL_MAX_CONNECTIONS }),
      startEmbeddedPostgresServer(15),
    ]);
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    names = executorTopology(sandbox);
    ({ results, stop: stopResults } = await collectResults(nc, names));
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    // Enough slots to run every request at once: only the per-server bound holds them back.
    app = await startExecutor(names, sandbox.url, secrets, 'replica-a', {
      HTTP_PORT: String(port),
      EXECUTOR_CONCURRENCY: String(SMALL_SERVER_DATABASES + OTHER_SERVER_DATABASES),
      EXECUTOR_SERVER_CONCURRENCY: String(SERVER_BOUND),
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    stopResults();
    await nc?.close();
    await sandbox?.cleanup();
    // The servers are this file's own: stopping them removes their databases and roles.
    await Promise.allSettled([small?.stop(), other?.stop()]);
  }, 120_000);

  it('runs at most the bound on the small server at once, the other server beside it, and every plan applies on its first delivery', async () => {
    const plans: { name: string; url: string }[] = [];
    for (const [server, count] of [
      [small, SMALL_SERVER_DATABASES],
      [other, OTHER_SERVER_DATABASES],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const db = await createPostgresSandboxOn(`bound_${i}`, server.adminUrl);
        // The harness's replicas log the lock holder into this table inside every executing transaction.
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        await client.query(LOCK_LOG_DDL).finally(() => client.end());
        plans.push({ name: `plan-${server.port}-${i}`, url: db.url });
      }
    }
    // Role DDL in every plan: each execution also holds its server's role-lock session while it commits.
    // Planned one at a time (the small server has few connections to spare).
    const requests = [];
    for (const [i, plan] of plans.entries()) {
      const role = `rpx_${run}_b${i}`;
      const { request } = await approvedRequest({
        secrets,
        url: plan.url,
        planName: plan.name,
        content: {
          roles: [{ name: role, login: false, config: {} }],
          schemas: [{ name: 'app' }],
          grants: [{ role, privileges: ['USAGE'], object: { type: 'schema', name: 'app' } }],
        },
      });
      requests.push(request);
    }
    const clients = [small, other].map((server) => new pg.Client({ connectionString: server.adminUrl }));
    await Promise.all(clients.map((c) => c.connect()));
    const sessions = new ExecutorSessions(clients);
    try {
      // The small server's requests first, so the other server's arrive while its slots are full.
      for (const request of requests) await publishRequest(nc, names, request);
      const final = await eventually(
        'a final result of every plan',
        () => {
          const done = results.filter((r) => r.phase !== 'Applying');
          return done.length >= plans.length ? done : undefined;
        },
        90_000,
      );
      expect(
        final
          .map((r) => `${r.plan.name} ${r.phase}/${r.reason}${r.lastError ? ` ${r.lastError.message}` : ''}`)
          .sort(),
      ).toEqual(plans.map((p) => `${p.name} Applied/Executed`).sort());
    } finally {
      await sessions.stop();
      await Promise.all(clients.map((c) => c.end()));
    }
    // Every plan applied on its first delivery: no "too many clients" (53300), nothing nak-ed for redelivery.
    expect(await metric(metricsUrl, 'rp_messages_failed_total')).toBe(0);
    // The bound held on the small server and was reached: the rest waited in the replica.
    expect(Math.max(...sessions.samples.map(([onSmall]) => onSmall!))).toBe(SERVER_BOUND);
    expect(await metric(metricsUrl, 'rp_executor_server_wait_seconds_count')).toBe(plans.length);
    // The other server's executions ran while the small one's slots were taken: the bound is per server.
    expect(Math.max(...sessions.samples.map(([onSmall, onOther]) => onSmall! + onOther!))).toBeGreaterThan(
      SERVER_BOUND,
    );
  }, 180_000);
});
