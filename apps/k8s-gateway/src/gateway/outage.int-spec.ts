// The k8s-gateway across a NATS outage (private nats-server): what changed in the API while the broker was
// away (a create, an update, a delete) reaches a ResourceCache once the broker is back, without a resync.
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  ResourceCache,
  SPINE_STREAMS,
  SUBJECTS,
  ensureTopology,
  k8sCommandContract,
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
import { Gateway, kubeConfigFrom } from './gateway.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const NS = 'outage';
const quiet = process.env['RP_TEST_VERBOSE']
  ? { log: console.log, warn: console.warn, error: console.error }
  : { log: () => undefined, warn: () => undefined, error: () => undefined };

let emu: Emulator;
let server: PrivateNatsServer;
let nc: NatsConnection;
let gateway: Gateway | undefined;
let cache: ResourceCache | undefined;

const coords = { group: GROUP, version: VERSION, plural: KIND_NAMES.PostgresPolicy.plural, namespace: NS };
const policy = (name: string, label = 'v1') => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'PostgresPolicy',
  metadata: { name, labels: { rev: label } },
  spec: { connection: { secretRef: { name: 'app-db' } }, approval: 'manual' },
});

beforeAll(async () => {
  emu = await startEmulator({ crdDir });
  server = await startPrivateNatsServer();
  nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
});

afterAll(async () => {
  await cache?.stop();
  await gateway?.stop();
  await nc.close();
  await server.dispose();
  await emu.stop();
});

test('changes made while NATS is down reach consumers once it is back, deletes included', async () => {
  const commands: ConsumerDefinition = {
    stream: 'RP_K8S_COMMANDS',
    durable: 'k8s-gateway-commands',
    filterSubject: 'rp.k8s.cmd.>',
    ackWaitMs: 30_000,
    maxDeliver: 5,
    maxAckPending: 16,
  };
  await ensureTopology(await jetstreamManager(nc), { streams: SPINE_STREAMS, consumers: [commands] });
  const co = emu.kubeConfig().makeApiClient(CustomObjectsApi);
  await co.createNamespacedCustomObject({ ...coords, body: policy('kept') });
  await co.createNamespacedCustomObject({ ...coords, body: policy('deleted') });
  const config: GatewayConfig = {
    KUBECONFIG: emu.kubeconfigPath,
    WATCH_NAMESPACE: NS,
    LEASE_NAMESPACE: NS,
    LEASE_NAME: 'k8s-gateway',
    GATEWAY_IDENTITY: 'gw-outage',
    LEASE_DURATION_SECONDS: 5,
    LEASE_RETRY_MS: 250,
    RESYNC_INTERVAL_MS: 3_600_000,
    CONFLICT_RETRIES: 5,
    GATEWAY_COMMAND_CONCURRENCY: 8,
    CLUSTER_ID: '',
    SECRET_READ_POLICY: 'referenced',
    FINGERPRINT_KEY_SECRET: 'rolepolicy-fingerprint-key',
  };
  gateway = new Gateway(
    kubeConfigFrom(config),
    nc,
    new JetStreamPublisher(nc),
    config,
    {
      resourceContract: resourceEventContract,
      resourceSubject: (kind, namespace, name) => resourceSubject(kind, namespace, name),
      secretReadSubject: SUBJECTS.secretRead,
      secretGenerateSubject: SUBJECTS.secretGenerate,
      commandContract: k8sCommandContract,
      commandConsumer: commands,
      deadLetterSubject: (subject) => `rp.deadletter.${subject}`,
      backoff: { initialMs: 100, maxMs: 1_000 },
    },
    quiet,
  );
  gateway.start();
  const view = await ResourceCache.start(nc, { kinds: ['postgrespolicy'], logger: quiet });
  cache = view;
  await view.ready;
  const names = () =>
    view
      .list('postgrespolicy')
      .map((o) => `${o.metadata.name}:${(o.metadata as { labels?: { rev?: string } }).labels?.rev}`)
      .sort()
      .join(',');
  await eventually('both policies', () => names() === 'deleted:v1,kept:v1');

  await server.stop();
  await co.deleteNamespacedCustomObject({ ...coords, name: 'deleted' });
  await co.createNamespacedCustomObject({ ...coords, body: policy('created') });
  await co.patchNamespacedCustomObject(
    { ...coords, name: 'kept', body: { metadata: { labels: { rev: 'v2' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  // Longer than the client's 5 s publish timeout, so the first sends of these changes fail.
  await new Promise((resolve) => setTimeout(resolve, 7_000));
  await server.start();

  // The resync timer is an hour away: only the retries and the reconnect republish can bring these.
  await eventually('the outage changes', () => names() === 'created:v1,kept:v2', 30_000);
}, 90_000);
