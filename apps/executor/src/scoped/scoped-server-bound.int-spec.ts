// Scoped executions bounded per PostgreSQL server (issue 28, "Several servers"), revocations ahead of everything
// (ADR 0013): activations share EXECUTOR_SERVER_CONCURRENCY with policy executions, revocations have
// EXECUTOR_SERVER_REVOKE_CONCURRENCY slots of their own. On a real server with max_connections 8, eight
// activations over four databases are held at the server's role lock (the test holds their subjects' locks), so
// the two that got the server's slots keep them and the other six wait unconnected; a revocation on a fifth
// database must still run at once, and nothing may fail for want of a connection.
import type { INestApplication } from '@nestjs/common';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { ensureTopology, type ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import { targetOfUrl } from '@rolepolicy/catalog';
import { logicalFingerprint } from '@rolepolicy/policy';
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
import { clusterNames, ensureClusterStreams, type ClusterNames } from '../execution/test-support/cluster.js';
import { executorTopology, type ExecutorTopology } from '../execution/test-support/harness.js';
import {
  collectScopedResults,
  publishRequest,
  publishTarget,
  scopedMessage,
  sendScoped,
  startScopedExecutor,
  type HeldRequest,
  type TargetPolicy,
} from './test-support/scoped-cluster.js';

const NS = 'team-s';
const ACTIVATION_DATABASES = 4;
const ACTIVATIONS_PER_DATABASE = 2;
const SERVER_BOUND = 2;
const REVOKE_BOUND = 1;
/**
 * The test's own session (role locks, samples) + two held activations x (database session + role-lock
 * session) + the revocation's two sessions = 7, and one to spare. Four activations at once (one per database,
 * as the per-database mutex alone allows) would ask for 9 with the test's session.
 */
const MAX_CONNECTIONS = 8;
/** How long the revocation may take while the activations hold the server's slots (their lock_timeout is 10 s). */
const REVOKE_WITHIN_MS = 5_000;
const run = sandboxId();
const roleName = (label: string): string => `rpsb_${run}_${label}`;

/** The server's view every few ms: executor databases in use, and role-lock waits (advisory, not granted). */
class ServerSamples {
  readonly scopedDatabases: number[] = [];
  readonly lockWaits: number[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly client: pg.Client) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const { rows } = await this.client.query<{ databases: number; waits: number }>(
        `SELECT (SELECT count(DISTINCT datname)::int FROM pg_catalog.pg_stat_activity
                  WHERE application_name = 'rolepolicy-executor-scoped') AS databases,
                (SELECT count(*)::int FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND NOT granted) AS waits`,
      );
      this.scopedDatabases.push(rows[0]!.databases);
      this.lockWaits.push(rows[0]!.waits);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

async function metric(url: string, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('executor: scoped executions bounded per server, revocations in slots of their own (ADR 0013)', () => {
  let small: EmbeddedPostgres;
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let topology: ExecutorTopology;
  let names: ClusterNames;
  let results: ScopedExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  let app: INestApplication | undefined;
  let metricsUrl = '';

  beforeAll(async () => {
    small = await startEmbeddedPostgresServer(15, { maxConnections: MAX_CONNECTIONS });
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    topology = executorTopology(sandbox);
    names = clusterNames(sandbox, topology);
    await ensureClusterStreams(nc, names);
    await ensureTopology(await jetstreamManager(nc), { streams: topology.topology.streams, consumers: [] });
    ({ results, stop: stopResults } = await collectScopedResults(
      nc,
      topology,
      sandbox.durable('scoped-results'),
    ));
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    app = await startScopedExecutor(topology, names, sandbox.url, {
      HTTP_PORT: String(port),
      // Pull slots for every activation at once: only the per-server bound holds them back.
      EXECUTOR_CONCURRENCY: String(ACTIVATION_DATABASES * ACTIVATIONS_PER_DATABASE),
      EXECUTOR_SERVER_CONCURRENCY: String(SERVER_BOUND),
      EXECUTOR_SERVER_REVOKE_CONCURRENCY: String(REVOKE_BOUND),
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    stopResults();
    await nc?.close();
    await sandbox?.cleanup();
    // The server is this file's own: stopping it removes its databases and roles.
    await small?.stop();
  }, 120_000);

  it('runs a revocation while activations hold every server slot, and nothing fails for want of a connection', async () => {
    const admin = new pg.Client({ connectionString: small.adminUrl });
    await admin.connect();
    const target = async (label: string): Promise<{ target: TargetPolicy; url: string }> => {
      const db = await createPostgresSandboxOn(label, small.adminUrl);
      const { host, port, database } = targetOfUrl(db.url);
      return {
        url: db.url,
        target: {
          namespace: NS,
          name: label,
          uid: `uid-${run}-${label}`,
          fingerprint: logicalFingerprint(host, port, database),
        },
      };
    };
    const activations: HeldRequest[] = [];
    const subjects: string[] = [];
    for (let d = 0; d < ACTIVATION_DATABASES; d++) {
      const { target: policy, url } = await target(`act${d}`);
      const pairs = Array.from({ length: ACTIVATIONS_PER_DATABASE }, (_, k) => ({
        subject: roleName(`alice_${d}_${k}`),
        role: roleName(`reader_${d}_${k}`),
      }));
      for (const { subject, role } of pairs)
        await admin.query(`CREATE ROLE "${subject}" LOGIN; CREATE ROLE "${role}"`);
      const roles = pairs.flatMap((p) => [p.subject, p.role]);
      await publishTarget(
        nc,
        names,
        policy,
        url,
        roles,
        pairs.map((p) => p.role),
      );
      for (const [k, pair] of pairs.entries()) {
        activations.push(
          await publishRequest(nc, names, policy, { name: `r-${d}-${k}`, ...pair }, 'Applying'),
        );
        subjects.push(pair.subject);
      }
    }
    // The revocation's database, roles and the membership it removes: none of the locked names.
    const { target: revokeTarget, url: revokeUrl } = await target('rev');
    const [bob, auditor] = [roleName('bob'), roleName('auditor')];
    await admin.query(`CREATE ROLE "${bob}" LOGIN; CREATE ROLE "${auditor}"; GRANT "${auditor}" TO "${bob}"`);
    await publishTarget(nc, names, revokeTarget, revokeUrl, [bob, auditor], [auditor]);
    const revoked = await publishRequest(
      nc,
      names,
      revokeTarget,
      { name: 'r-rev', subject: bob, role: auditor },
      'Revoking',
    );

    // Every activation's subject is locked in the role lock's database, as a long role DDL elsewhere would.
    for (const subject of subjects) {
      await admin.query(
        `SELECT pg_catalog.pg_advisory_lock(pg_catalog.hashtextextended('rolepolicy:role:' || $1, 0))`,
        [subject],
      );
    }
    const samples = new ServerSamples(admin);
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      await admin.query('SELECT pg_catalog.pg_advisory_unlock_all()');
    };
    try {
      for (const held of activations) await sendScoped(nc, topology, scopedMessage(held, 'Activate'));
      // The server's slots are taken: the activations holding them wait for the role lock, the others unconnected.
      await eventually(
        'activations holding every server slot',
        () => (samples.lockWaits.at(-1)! >= SERVER_BOUND ? true : undefined),
        20_000,
      );
      const sent = performance.now();
      await sendScoped(nc, topology, scopedMessage(revoked, 'Revoke'));
      const revocation = await eventually(
        'the revocation, while every server slot is held by an activation',
        () => results.find((r) => r.operation === 'Revoke'),
        REVOKE_WITHIN_MS,
      );
      const tookMs = performance.now() - sent;
      // Still held: no activation has finished, so the revocation went past them.
      expect(results.filter((r) => r.operation === 'Activate')).toEqual([]);
      expect(revocation).toMatchObject({ outcome: 'Applied', reason: 'MembershipsRevoked' });
      expect(tookMs).toBeLessThan(REVOKE_WITHIN_MS);
      const { rows } = await admin.query(
        `SELECT 1 FROM pg_catalog.pg_auth_members am JOIN pg_catalog.pg_roles r ON r.oid = am.roleid
          JOIN pg_catalog.pg_roles m ON m.oid = am.member WHERE r.rolname = $1 AND m.rolname = $2`,
        [auditor, bob],
      );
      expect(rows).toEqual([]);
      await release();
      const activated = await eventually(
        'every activation once the role locks are free',
        () => {
          const done = results.filter((r) => r.operation === 'Activate');
          return done.length >= activations.length ? done : undefined;
        },
        60_000,
      );
      expect(activated.map((r) => `${r.outcome}/${r.reason}`)).toEqual(
        activations.map(() => 'Applied/MembershipsGranted'),
      );
    } finally {
      await release();
      await samples.stop();
      await admin.end();
    }
    // The bound held and was reached: at most two activations and the revocation on the server at once.
    expect(Math.max(...samples.lockWaits)).toBe(SERVER_BOUND);
    expect(Math.max(...samples.scopedDatabases)).toBeLessThanOrEqual(SERVER_BOUND + REVOKE_BOUND);
    // Every request ran on its first delivery: no "too many clients" (53300), nothing nak-ed for redelivery.
    expect(await metric(metricsUrl, 'rp_messages_failed_total')).toBe(0);
    expect(await metric(metricsUrl, 'rp_executor_server_wait_seconds_count', 'work="activate"')).toBe(
      activations.length,
    );
    expect(await metric(metricsUrl, 'rp_executor_server_wait_seconds_count', 'work="revoke"')).toBe(1);
  }, 180_000);
});
