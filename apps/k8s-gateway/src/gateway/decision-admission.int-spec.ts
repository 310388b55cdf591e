// The gateway publishes whether decisions are authenticated (ADR 0026) on the resource stream, following the
// ValidatingAdmissionPolicies and bindings the API has, and a DecisionAdmissionWatch (what the planner and the
// access-scheduler use) reads it, also when it starts after the gateway published. Real nats-server and the
// API emulator (which serves admissionregistration.k8s.io/v1).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
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

const admission = new URL('../../../../deploy/admission/decisions.yaml', import.meta.url);

async function install(validationActions: string[]): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(emu.kubeConfig());
  for (const doc of parseAllDocuments(await readFile(admission, 'utf8'))) {
    const object = doc.toJS() as KubernetesObject & { spec: Record<string, unknown> };
    const body =
      object.kind === 'ValidatingAdmissionPolicyBinding'
        ? { ...object, spec: { ...object.spec, validationActions } }
        : object;
    await client.create(body);
  }
}

async function uninstall(): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(emu.kubeConfig());
  for (const kind of ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy']) {
    await client.delete({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name: 'rolepolicy-decisions' },
    });
  }
}

test('follows the policy and its binding: unauthenticated, authenticated, unauthenticated again', async () => {
  const watch = await DecisionAdmissionWatch.start(nc, {
    stream: 'ADM_RES',
    subjectRoot: root,
    logger: { warn: (m) => void logs.push(m) },
  });
  const states = () => watch.state;
  try {
    await eventually('the first state', () => states() !== undefined, 30_000);
    expect(watch.state).toMatchObject({
      v: 1,
      authenticated: false,
      bindings: [],
      detail: 'no ValidatingAdmissionPolicy rolepolicy-decisions is installed',
    });
    await install(['Deny']);
    await eventually('authenticated', () => watch.state?.authenticated === true, 30_000);
    expect(watch.state?.bindings).toEqual(['rolepolicy-decisions']);
    // A reader that starts later gets the last state: the stream keeps it.
    const late = await DecisionAdmissionWatch.start(nc, {
      stream: 'ADM_RES',
      subjectRoot: root,
      logger: { warn: () => undefined },
    });
    expect((await late.firstState(30_000))?.authenticated).toBe(true);
    await late.stop();

    await uninstall();
    await eventually('unauthenticated again', () => watch.state?.authenticated === false, 30_000);
    // A binding that only warns does not authenticate anything.
    await install(['Warn', 'Audit']);
    await eventually('a warning-only binding', () => /do not deny/.test(watch.state?.detail ?? ''), 30_000);
    expect(watch.state?.authenticated).toBe(false);
    await uninstall();
    expect(logs.filter((l) => l.startsWith('decisions are authenticated'))).toHaveLength(1);
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
  const gauge = async () =>
    /^rp_decisions_unauthenticated (\d)$/m.exec(
      await registry.getSingleMetricAsString('rp_decisions_unauthenticated'),
    )?.[1];
  try {
    await eventually('the start-up line', () => lines.length === 1, 30_000);
    expect(lines).toEqual([expect.stringMatching(/^warn decisions are unauthenticated: /)]);
    expect(await gauge()).toBe('1');
    await install(['Deny']);
    await eventually('the flip', () => report.state.authenticated, 30_000);
    expect(lines.at(-1)).toMatch(
      /^log decisions are authenticated: the admission policy rolepolicy-decisions/,
    );
    expect(await gauge()).toBe('0');
    expect(changes).toEqual([false, true]);
  } finally {
    await report.stop();
  }
});
