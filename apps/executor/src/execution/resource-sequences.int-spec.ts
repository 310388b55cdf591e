// What an execution request costs the resource stream, on real NATS and PostgreSQL: the JetStream API
// requests the executor sends about RP_RESOURCES per execution (seen by a plain subscriber on `$JS.API.>`,
// nothing stubbed), with and without the sequences the planner had seen (`resourceSequences`), and how a
// request whose plan the executor's cache has not applied yet waits for it instead of being redelivered.
import type { INestApplication } from '@nestjs/common';
import pg from 'pg';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ResourceCache, type ExecuteRequestV2, type ExecuteResultV1 } from '@rolepolicy/contracts';
import type { PolicyContent } from '@rolepolicy/policy';
import {
  createNatsSandbox,
  createPostgresSandbox,
  eventually,
  sandboxId,
  type NatsSandbox,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import { seenBy } from '../../../planner/src/reconcile/command-sink.js';
import {
  clusterNames,
  ensureClusterStreams,
  planObject,
  policyObject,
  publishObject,
  secretObject,
  startClusterExecutor,
  type ClusterNames,
} from './test-support/cluster.js';
import { ApiTraffic } from './test-support/api-traffic.js';
import {
  NAMESPACE,
  approvedRequest,
  collectResults,
  executorTopology,
  publishRequest,
  type ExecutorTopology,
  type SecretStore,
} from './test-support/harness.js';

const run = sandboxId();
const LABELS = ['late_old', 'late_seen', 'count_old', 'count_seen'] as const;
const roleOf = (label: string): string => `rps_${run}_${label}`;

describe('execution requests and the resource stream: what the planner saw, waited for locally', () => {
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let watcher: NatsConnection;
  let topology: ExecutorTopology;
  let cluster: ClusterNames;
  let results: ExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  let traffic: ApiTraffic;
  /** The planner's side: a cache of policies and plans on the same stream, read as the planner reads it. */
  let planner: ResourceCache;
  const store: SecretStore = { connections: new Map(), passwords: new Map() };
  const databases: PostgresSandbox[] = [];
  const apps: INestApplication[] = [];

  const finalResult = (plan: string): Promise<ExecuteResultV1> =>
    eventually(
      `final result of ${plan}`,
      () => results.find((r) => r.plan.name === plan && r.phase !== 'Applying'),
      60_000,
    );

  /** A database, a request for one role in it, and its Secret and policy published (the plan is not). */
  async function prepared(
    label: (typeof LABELS)[number],
  ): Promise<{ req: ExecuteRequestV2; content: PolicyContent }> {
    const db = await createPostgresSandbox(`seq_${label}`);
    databases.push(db);
    const content: PolicyContent = { roles: [{ name: roleOf(label), login: false }] };
    const planName = `plan-seq-${label.replace('_', '-')}`;
    const { request } = await approvedRequest({ secrets: store, url: db.url, planName, content });
    const req = { ...request, policy: { ...request.policy, name: `policy-${planName}` } };
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, `${planName}-conn`, { DATABASE_URL: db.url }),
    );
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', `${planName}-conn`, content),
    );
    return { req, content };
  }

  /** The approved plan of `req`, as the gateway publishes it after the planner's create and approval. */
  async function publishPlan(req: ExecuteRequestV2): Promise<void> {
    await publishObject(
      nc,
      cluster,
      'postgrespolicyplan',
      planObject(
        NAMESPACE,
        req.plan.name,
        req.policy.name,
        {
          digest: req.changeDigest,
          encoding: req.changeDigestEncoding,
          physical: req.approvedIdentity.physical,
          logical: req.approvedIdentity.logical,
        },
        'Approved',
      ),
    );
  }

  const lastSeq = async (): Promise<number> =>
    (await (await jetstreamManager(nc)).streams.info(cluster.resources.name)).state.last_seq;

  beforeAll(async () => {
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    watcher = await connect({ servers: sandbox.url });
    topology = executorTopology(sandbox);
    cluster = clusterNames(sandbox, topology);
    await ensureClusterStreams(nc, cluster);
    traffic = new ApiTraffic(watcher, cluster.resources.name, topology.stream);
    ({ results, stop: stopResults } = await collectResults(nc, topology));
    planner = await ResourceCache.start(nc, {
      kinds: ['postgrespolicy', 'postgrespolicyplan'],
      stream: cluster.resources.name,
      subjectRoot: cluster.root,
    });
    await planner.ready;
    // A short visibility wait, so a plan that shows up late is redelivered within the test's time.
    apps.push(await startClusterExecutor(topology, cluster, sandbox.url, 500));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    traffic?.stop();
    await planner?.stop();
    stopResults();
    await watcher?.close();
    await nc?.close();
    await sandbox?.cleanup();
    // Roles are the server's: dropped through any of the databases before those go.
    if (databases[0] !== undefined) {
      const client = new pg.Client({ connectionString: databases[0].url });
      await client.connect();
      for (const label of LABELS)
        await client.query(`DROP ROLE IF EXISTS "${roleOf(label)}"`).catch(() => undefined);
      await client.end();
    }
    await Promise.all(databases.map((db) => db.drop().catch(() => undefined)));
  }, 120_000);

  it('an older planner (no sequences): a plan stored after the visibility wait is redelivered, then applied', async () => {
    const { req } = await prepared('late_old');
    const naks = traffic.naks.length;
    await publishRequest(nc, topology, req);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await publishPlan(req);

    expect(await finalResult(req.plan.name)).toMatchObject({ phase: 'Applied', reason: 'Executed' });
    expect(traffic.naks.length - naks).toBeGreaterThanOrEqual(1);
  });

  it('a request carrying the plan sequence its cache lacks waits for it and runs on its first delivery', async () => {
    const { req } = await prepared('late_seen');
    // The executor's cache is behind what the planner saw: here the plan is stored only after the request.
    const planSeq = (await lastSeq()) + 1;
    const naks = traffic.naks.length;
    await publishRequest(nc, topology, { ...req, resourceSequences: { postgrespolicyplan: planSeq } });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await publishPlan(req);
    expect(await lastSeq()).toBe(planSeq);

    expect(await finalResult(req.plan.name)).toMatchObject({ phase: 'Applied', reason: 'Executed' });
    expect(traffic.naks.length - naks).toBe(0);
  });

  it('JetStream API requests about the resource stream per execution: one sync with the sequences, two without', async () => {
    const counts: Record<string, ReturnType<ApiTraffic['since']>> = {};
    for (const [label, carry] of [
      ['count_old', false],
      ['count_seen', true],
    ] as const) {
      const { req } = await prepared(label);
      await publishPlan(req);
      await planner.sync();
      // Quiet first: the executor's cache has applied everything (no catching up inside the window).
      await eventually('the executor caught up', async () => {
        const before = traffic.api.length;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return traffic.api.length === before ? true : undefined;
      });
      const from = traffic.api.length;
      await publishRequest(nc, topology, carry ? { ...req, resourceSequences: seenBy(planner) } : req);
      expect(await finalResult(req.plan.name)).toMatchObject({ phase: 'Applied', reason: 'Executed' });
      counts[label] = traffic.since(from);
    }
    // The figures docs/executor.md quotes ("What a request costs the resource stream").
    console.log(`JetStream API requests about RP_RESOURCES per execution: ${JSON.stringify(counts)}`);
    expect(counts['count_old']?.streamInfo).toBe(2);
    expect(counts['count_seen']?.streamInfo).toBe(1);
    expect(counts['count_seen']!.total).toBeLessThan(counts['count_old']!.total);
  });
});
