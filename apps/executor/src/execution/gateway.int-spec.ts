// The executor with the real k8s-gateway on the Kubernetes API emulator, real NATS and real PostgreSQL:
// objects written to the API reach the executor's cache through the gateway, and the executor's plan
// status patches come back through the gateway's command consumer onto the plan in the API.
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { INestApplication } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import {
  JetStreamPublisher,
  decodePayload,
  ensureTopology,
  k8sCommandContract,
  resourceEventContract,
  type ConsumerDefinition,
  type ExecuteResultV1,
  resourceSubject,
} from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import type { PolicyContent } from '@rolepolicy/policy';
import {
  createNatsSandbox,
  createPostgresSandbox,
  eventually,
  sandboxId,
  startEmulator,
  type Emulator,
  type NatsSandbox,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import { Gateway, kubeConfigFrom } from '../../../k8s-gateway/src/gateway/gateway.js';
import type { GatewayConfig } from '../../../k8s-gateway/src/gateway/gateway-config.js';
import { clusterNames, startClusterExecutor, type ClusterNames } from './test-support/cluster.js';
import {
  NAMESPACE,
  approvedRequest,
  collectResults,
  executorTopology,
  publishRequest,
  type ExecutorTopology,
  type SecretStore,
} from './test-support/harness.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const API_VERSION = `${GROUP}/${VERSION}`;
const run = sandboxId();
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const roleExists = async (url: string, role: string): Promise<boolean> =>
  (await query(url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;

type PlanStatus = {
  phase?: string;
  appliedAt?: string;
  applyingSince?: string;
  conditions?: { type: string; status: string }[];
};

describe('executor with the real k8s-gateway on the API emulator', () => {
  let emu: Emulator;
  let co: CustomObjectsApi;
  let core: CoreV1Api;
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let topology: ExecutorTopology;
  let cluster: ClusterNames;
  let gateway: Gateway;
  let results: ExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  const planEvents = new Map<string, PlanStatus>();
  const store: SecretStore = { connections: new Map(), passwords: new Map() };
  const databases: PostgresSandbox[] = [];
  const roles: string[] = [];
  const apps: INestApplication[] = [];

  const plural = (kind: 'PostgresPolicy' | 'PostgresPolicyPlan') => ({
    group: GROUP,
    version: VERSION,
    plural: KIND_NAMES[kind].plural,
    namespace: NAMESPACE,
  });

  beforeAll(async () => {
    emu = await startEmulator({ crdDir });
    co = emu.kubeConfig().makeApiClient(CustomObjectsApi);
    core = emu.kubeConfig().makeApiClient(CoreV1Api);
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    topology = executorTopology(sandbox);
    cluster = clusterNames(sandbox, topology);
    const root = cluster.root;
    const consumer: ConsumerDefinition = {
      stream: cluster.commands.name,
      durable: sandbox.durable('gateway'),
      filterSubject: `${root}.k8s.cmd.>`,
      ackWaitMs: 30_000,
      maxDeliver: 5,
      maxAckPending: 16,
    };
    await ensureTopology(await jetstreamManager(nc), {
      streams: [cluster.resources, cluster.commands, ...topology.topology.streams],
      consumers: [consumer],
    });
    ({ results, stop: stopResults } = await collectResults(nc, topology));
    // What the planner would watch: the plan's status as the gateway publishes it.
    nc.subscribe(`${root}.resource.postgrespolicyplan.>`, {
      callback: (_err, msg) => {
        const decoded = decodePayload({ ...resourceEventContract, subject: `${root}.resource.>` }, msg.data);
        if (!decoded.ok) return;
        const object = decoded.value.object as { metadata: { name: string }; status?: PlanStatus };
        planEvents.set(object.metadata.name, object.status ?? {});
      },
    });
    const config: GatewayConfig = {
      KUBECONFIG: emu.kubeconfigPath,
      WATCH_NAMESPACE: NAMESPACE,
      LEASE_NAMESPACE: NAMESPACE,
      LEASE_NAME: 'k8s-gateway',
      GATEWAY_IDENTITY: 'gw-executor-test',
      LEASE_DURATION_SECONDS: 2,
      LEASE_RETRY_MS: 250,
      RESYNC_INTERVAL_MS: 3_600_000,
      CONFLICT_RETRIES: 5,
      GATEWAY_COMMAND_CONCURRENCY: 8,
      FINGERPRINT_KEY_SECRET: 'rolepolicy-fingerprint-key',
      CLUSTER_ID: '',
      SECRET_READ_POLICY: 'referenced',
    };
    gateway = new Gateway(
      kubeConfigFrom(config),
      nc,
      new JetStreamPublisher(nc),
      config,
      {
        resourceContract: { ...resourceEventContract, subject: `${root}.resource.>` },
        resourceSubject: (kind, namespace, name) => resourceSubject(kind, namespace, name, root),
        commandContract: { ...k8sCommandContract, subject: `${root}.k8s.cmd.>` },
        commandConsumer: consumer,
        deadLetterSubject: topology.deadLetterSubject,
        backoff: { initialMs: 100, maxMs: 1_000 },
        secretReadSubject: `${root}.k8s.secret.read`,
        secretGenerateSubject: `${root}.k8s.secret.generate`,
      },
      quiet,
    );
    gateway.start();
    await eventually('gateway leadership', () => gateway.isLeader(), 30_000);
    apps.push(await startClusterExecutor(topology, cluster, sandbox.url));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    await gateway?.stop();
    stopResults();
    await nc?.drain().catch(() => undefined);
    await sandbox?.cleanup();
    await emu?.stop();
    await Promise.all(databases.map((db) => db.drop().catch(() => undefined)));
    for (const name of roles) {
      await query('postgres://postgres@127.0.0.1:5432/postgres', `DROP ROLE IF EXISTS "${name}"`).catch(
        () => undefined,
      );
    }
  }, 120_000);

  /**
   * Writes what the planner and a person would have written: the connection Secret, the policy, and its
   * plan with the approved digest and the person's decision; resolves once the gateway published it.
   */
  async function clusterFor(label: string, decision: 'Approved' | 'Denied') {
    const db = await createPostgresSandbox(`gw_${label}`);
    databases.push(db);
    const role = `rpg_${run}_${label}`;
    roles.push(role);
    const planName = `plan-gw-${label}`;
    const policyName = `policy-gw-${label}`;
    const content: PolicyContent = { roles: [{ name: role, login: false }] };
    const { request: built } = await approvedRequest({ secrets: store, url: db.url, planName, content });
    await core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: { metadata: { name: `${planName}-conn` }, stringData: { DATABASE_URL: db.url } },
    });
    const policy = await co.createNamespacedCustomObject({
      ...plural('PostgresPolicy'),
      body: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        metadata: { name: policyName },
        spec: { connection: { secretRef: { name: `${planName}-conn` } }, mode: 'plan', ...content },
      },
    });
    await co.createNamespacedCustomObject({
      ...plural('PostgresPolicyPlan'),
      body: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicyPlan',
        metadata: { name: planName },
        spec: {
          managedDatabaseIdentity: built.approvedIdentity.logical ?? 'unknown',
          policyGeneration: 1,
          policyRef: { name: policyName },
          reconciliationMode: 'authoritative',
        },
      },
    });
    await co.patchNamespacedCustomObjectStatus(
      {
        ...plural('PostgresPolicyPlan'),
        name: planName,
        body: {
          status: {
            phase: decision === 'Approved' ? 'Approved' : 'Rejected',
            conditions: [
              { type: decision, status: 'True', reason: 'ByTester', message: 'decided in the test' },
            ],
            decidedBy: { username: 'tester@example.com' },
            changeDigest: built.changeDigest,
            changeDigestEncoding: built.changeDigestEncoding,
            targetPhysicalIdentity: built.approvedIdentity.physical,
            targetLogicalFingerprint: built.approvedIdentity.logical,
          },
        },
      },
      merge,
    );
    await eventually(`the gateway published ${planName} decided`, () =>
      planEvents.get(planName)?.conditions?.some((c) => c.type === decision) ? true : undefined,
    );
    const request = {
      ...built,
      policy: {
        ...built.policy,
        name: policyName,
        uid: (policy as { metadata: { uid: string } }).metadata.uid,
      },
    };
    return { db, role, planName, request };
  }

  const planStatus = async (name: string): Promise<PlanStatus> =>
    (
      (await co.getNamespacedCustomObject({ ...plural('PostgresPolicyPlan'), name })) as {
        status?: PlanStatus;
      }
    ).status ?? {};

  it('an approved plan runs, and the plan in the API goes Applied with its decision kept', async () => {
    const { db, role, planName, request } = await clusterFor('ok', 'Approved');
    await publishRequest(nc, topology, request);

    const result = await eventually(
      'the final result',
      () => results.find((r) => r.plan.name === planName && r.phase !== 'Applying'),
      60_000,
    );
    expect(result).toMatchObject({ phase: 'Applied', reason: 'Executed' });
    expect(await roleExists(db.url, role)).toBe(true);
    const status = await eventually(
      'plan phase Applied in the API',
      async () => {
        const s = await planStatus(planName);
        return s.phase === 'Applied' ? s : undefined;
      },
      30_000,
    );
    expect(status.appliedAt).toEqual(expect.any(String));
    expect(status.applyingSince).toEqual(expect.any(String));
    expect(status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Approved', status: 'True' }),
        expect.objectContaining({ type: 'Applied', status: 'True' }),
      ]),
    );
  }, 90_000);

  it('a denied plan is never executed and stays Rejected', async () => {
    const { db, role, planName, request } = await clusterFor('denied', 'Denied');
    await publishRequest(nc, topology, request);

    const result = await eventually(
      'the final result',
      () => results.find((r) => r.plan.name === planName),
      60_000,
    );
    expect(result).toMatchObject({ phase: 'Skipped' });
    expect(await roleExists(db.url, role)).toBe(false);
    expect((await planStatus(planName)).phase).toBe('Rejected');
  }, 90_000);
});
