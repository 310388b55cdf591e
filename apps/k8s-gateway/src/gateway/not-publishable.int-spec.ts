// An object the gateway cannot publish (its event exceeds the NATS server's max_payload) is never silent:
// a rolepolicy.io object gets Ready=False reason NotPublishable once, a Secret a Warning log naming it,
// and objects that fit keep flowing. Real nats-server (small max_payload) and the API emulator.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  deadLetterSubject,
  ensureTopology,
  k8sCommandContract,
  parseResourceSubject,
  resourceEventContract,
  resourceSubject,
  type ConsumerDefinition,
} from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import {
  eventually,
  startEmulator,
  startPrivateNatsServer,
  type Emulator,
  type PrivateNatsServer,
} from '@rolepolicy/testing';
import type { GatewayConfig } from './gateway-config.js';
import { Gateway, kubeConfigFrom, type GatewayWiring } from './gateway.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const API_VERSION = `${GROUP}/${VERSION}`;
const TIMEOUT_MS = 60_000;
const MAX_PAYLOAD = 8 * 1024;
const root = 'big';
const ns = 'big';

let emu: Emulator;
let server: PrivateNatsServer;
let dir: string;
let nc: NatsConnection;
let gateway: Gateway;
const warnings: string[] = [];
const subjects: string[] = [];

const policies = { group: GROUP, version: VERSION, plural: KIND_NAMES.PostgresPolicy.plural, namespace: ns };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rp-big-'));
  const configFile = path.join(dir, 'nats.conf');
  await writeFile(configFile, `max_payload: ${MAX_PAYLOAD}\n`);
  server = await startPrivateNatsServer({ configFile });
  emu = await startEmulator({ crdDir });
  nc = await connect({ servers: server.url });
  const consumer: ConsumerDefinition = {
    stream: 'BIG_CMD',
    durable: 'gateway',
    filterSubject: `${root}.k8s.cmd.>`,
    ackWaitMs: 30_000,
    maxDeliver: 5,
    maxAckPending: 16,
  };
  const stream = (name: string, subject: string, retention: 'limits' | 'workqueue' = 'limits') => ({
    name,
    subjects: [subject],
    retention,
    maxAgeMs: 600_000,
    duplicateWindowMs: 60_000,
  });
  await ensureTopology(await jetstreamManager(nc), {
    streams: [
      stream('BIG_RES', `${root}.resource.>`),
      stream('BIG_CMD', `${root}.k8s.cmd.>`, 'workqueue'),
      stream('BIG_DLQ', `${root}.deadletter.>`),
    ],
    consumers: [consumer],
  });
  nc.subscribe(`${root}.resource.>`, { callback: (_err, msg) => void subjects.push(msg.subject) });
  const wiring: GatewayWiring = {
    resourceContract: { ...resourceEventContract, subject: `${root}.resource.>` },
    resourceSubject: (kind, namespace, name) => resourceSubject(kind, namespace, name, root),
    commandContract: { ...k8sCommandContract, subject: `${root}.k8s.cmd.>` },
    commandConsumer: consumer,
    deadLetterSubject: (subject) => deadLetterSubject(subject, root),
    backoff: { initialMs: 100, maxMs: 1_000 },
    secretReadSubject: `${root}.k8s.secret.read`,
    secretGenerateSubject: `${root}.k8s.secret.generate`,
  };
  const config: GatewayConfig = {
    KUBECONFIG: emu.kubeconfigPath,
    WATCH_NAMESPACE: ns,
    LEASE_NAMESPACE: ns,
    LEASE_NAME: 'k8s-gateway',
    GATEWAY_IDENTITY: 'gw-big',
    LEASE_DURATION_SECONDS: 2,
    LEASE_RETRY_MS: 250,
    RESYNC_INTERVAL_MS: 3_600_000,
    CONFLICT_RETRIES: 5,
    GATEWAY_COMMAND_CONCURRENCY: 8,
    FINGERPRINT_KEY_SECRET: 'rolepolicy-fingerprint-key',
    CLUSTER_ID: '',
    SECRET_READ_POLICY: 'referenced',
  };
  const log = { log: () => undefined, warn: (m: string) => void warnings.push(m), error: () => undefined };
  gateway = new Gateway(kubeConfigFrom(config), nc, new JetStreamPublisher(nc), config, wiring, log);
  gateway.start();
  await eventually('leadership', () => gateway.isLeader());
});

afterAll(async () => {
  await gateway?.stop();
  await nc?.close();
  await emu?.stop();
  await server?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test(
  'a policy larger than max_payload gets Ready=False/NotPublishable once; smaller ones are published',
  async () => {
    const co = emu.kubeConfig().makeApiClient(CustomObjectsApi);
    const core = emu.kubeConfig().makeApiClient(CoreV1Api);
    const statusWrites: string[] = [];
    emu.setRequestHook(async ({ method, path: p }) => {
      if (method === 'PUT' && p.endsWith('/status')) statusWrites.push(p);
    });
    const spec = { connection: { secretRef: { name: 'app.db' } }, approval: 'manual' };
    const filler = 'x'.repeat(2 * MAX_PAYLOAD);
    await co.createNamespacedCustomObject({
      ...policies,
      body: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        metadata: { name: 'huge.policy', annotations: { 'example.com/notes': filler } },
        spec,
      },
    });
    await co.createNamespacedCustomObject({
      ...policies,
      body: { apiVersion: API_VERSION, kind: 'PostgresPolicy', metadata: { name: 'small.policy' }, spec },
    });
    // The Secret the policies name holds a value larger than max_payload: it travels anyway, because a
    // Secret is published as metadata, key names and a fingerprint (ADR 0006), never its value.
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'app.db' }, stringData: { DATABASE_URL: `postgres://u:${filler}@db/app` } },
    });

    const stored = await eventually('the NotPublishable condition', async () => {
      const o = await co.getNamespacedCustomObject({ ...policies, name: 'huge.policy' });
      return o.status?.conditions?.some((c: { reason?: string }) => c.reason === 'NotPublishable')
        ? o
        : undefined;
    });
    const ready = stored.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    expect(ready).toMatchObject({ type: 'Ready', status: 'False', reason: 'NotPublishable' });
    expect(ready.message).toContain(`max_payload (${MAX_PAYLOAD} bytes)`);
    expect(ready.last_transition_time).toEqual(expect.any(String));
    await eventually('the small policy on the bus', () =>
      subjects.some((s) => parseResourceSubject(s, root)?.name === 'small.policy'),
    );
    await eventually('the Secret on the bus, as metadata', () =>
      subjects.some((s) => parseResourceSubject(s, root)?.name === 'app.db'),
    );
    expect(warnings.some((w) => w.startsWith(`Secret ${ns}/app.db not published`))).toBe(false);
    expect(warnings.some((w) => w.startsWith(`PostgresPolicy ${ns}/huge.policy not published`))).toBe(true);
    // Sizes only: no value of the Secret reaches a log line.
    expect(warnings.join('\n')).not.toContain('postgres://');

    // The status write is itself an update; a resync sees the object again. Neither writes a second time.
    await gateway.resync();
    await eventually(
      'the resync warning',
      () => warnings.filter((w) => w.includes('huge.policy not published')).length >= 3,
    );
    expect(statusWrites.filter((p) => p.includes('huge.policy'))).toHaveLength(1);
    expect(subjects.some((s) => parseResourceSubject(s, root)?.name === 'huge.policy')).toBe(false);
    emu.setRequestHook(undefined);

    // Its delete still travels, as the object's key only: a reader may hold an earlier, smaller version.
    await co.deleteNamespacedCustomObject({ ...policies, name: 'huge.policy' });
    await eventually('the delete on the bus', () =>
      subjects.some((s) => parseResourceSubject(s, root)?.name === 'huge.policy'),
    );
  },
  TIMEOUT_MS,
);
