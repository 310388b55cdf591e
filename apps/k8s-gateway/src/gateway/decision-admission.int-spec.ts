// The gateway publishes whether decisions are authenticated (ADR 0025) on the resource stream, and a
// DecisionAdmissionWatch (what the planner and the access-scheduler use) reads it, also when it starts after
// the gateway published. The API emulator does not serve admissionregistration.k8s.io yet (issue 26, item 2):
// that is an answer too, "unauthenticated", saying why. Real nats-server and the API emulator.
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  DecisionAdmissionWatch,
  JetStreamPublisher,
  deadLetterSubject,
  ensureTopology,
  k8sCommandContract,
  resourceEventContract,
  resourceSubject,
  type ConsumerDefinition,
} from '@rolepolicy/contracts';
import {
  eventually,
  startEmulator,
  startPrivateNatsServer,
  type Emulator,
  type PrivateNatsServer,
} from '@rolepolicy/testing';
import { DecisionAdmissionReport } from '@rolepolicy/runtime';
import { Registry } from 'prom-client';
import type { GatewayConfig } from './gateway-config.js';
import { Gateway, kubeConfigFrom, type GatewayWiring } from './gateway.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const root = 'adm';
const ns = 'adm';

let emu: Emulator;
let server: PrivateNatsServer;
let nc: NatsConnection;
let gateway: Gateway;
const logs: string[] = [];

beforeAll(async () => {
  server = await startPrivateNatsServer();
  emu = await startEmulator({ crdDir });
  nc = await connect({ servers: server.url });
  const consumer: ConsumerDefinition = {
    stream: 'ADM_CMD',
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
      stream('ADM_RES', `${root}.resource.>`),
      stream('ADM_CMD', `${root}.k8s.cmd.>`, 'workqueue'),
      stream('ADM_DLQ', `${root}.deadletter.>`),
    ],
    consumers: [consumer],
  });
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
    GATEWAY_IDENTITY: 'gw-adm',
    LEASE_DURATION_SECONDS: 2,
    LEASE_RETRY_MS: 250,
    RESYNC_INTERVAL_MS: 3_600_000,
    CONFLICT_RETRIES: 5,
    GATEWAY_COMMAND_CONCURRENCY: 8,
    FINGERPRINT_KEY_SECRET: 'rolepolicy-fingerprint-key',
    CLUSTER_ID: 'adm-cluster',
    SECRET_READ_POLICY: 'referenced',
  };
  const log = {
    log: (m: unknown) => void logs.push(String(m)),
    warn: (m: unknown) => void logs.push(String(m)),
    error: () => undefined,
  };
  gateway = new Gateway(kubeConfigFrom(config), nc, new JetStreamPublisher(nc), config, wiring, log);
  gateway.start();
  await eventually('leadership', () => gateway.isLeader());
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await nc?.close();
  await emu?.stop();
  await server?.dispose();
});

test('an API server without admissionregistration.k8s.io: decisions are unauthenticated, said once', async () => {
  const watch = await DecisionAdmissionWatch.start(nc, {
    stream: 'ADM_RES',
    subjectRoot: root,
    logger: { warn: (m) => void logs.push(m) },
  });
  try {
    await eventually('the state', () => watch.state !== undefined, 30_000);
    expect(watch.state).toMatchObject({
      v: 1,
      authenticated: false,
      bindings: [],
      detail: expect.stringMatching(/does not serve admissionregistration\.k8s\.io\/v1/),
    });
    // A reader that starts later still gets it: the stream keeps the last message of the subject.
    const late = await DecisionAdmissionWatch.start(nc, {
      stream: 'ADM_RES',
      subjectRoot: root,
      logger: { warn: () => undefined },
    });
    await eventually('the late reader', () => late.state !== undefined, 30_000);
    expect(late.state?.authenticated).toBe(false);
    await late.stop();
    expect(logs.filter((l) => l.startsWith('decisions are unauthenticated'))).toHaveLength(1);
  } finally {
    await watch.stop();
  }
});

test('a service reports it once at start, as the gauge rp_decisions_unauthenticated and to its reconciler', async () => {
  const registry = new Registry();
  const lines: string[] = [];
  const changes: boolean[] = [];
  const report = await DecisionAdmissionReport.start(nc, {
    registry,
    stream: 'ADM_RES',
    subjectRoot: root,
    log: { log: (m) => void lines.push(`log ${m}`), warn: (m) => void lines.push(`warn ${m}`) },
    onChange: (state) => void changes.push(state.authenticated),
  });
  try {
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn decisions are unauthenticated: the API server does not serve admissionregistration/,
      ),
    ]);
    expect(report.state.authenticated).toBe(false);
    expect(changes).toEqual([false]);
    expect(await registry.getSingleMetricAsString('rp_decisions_unauthenticated')).toMatch(
      /^rp_decisions_unauthenticated 1$/m,
    );
  } finally {
    await report.stop();
  }
});
