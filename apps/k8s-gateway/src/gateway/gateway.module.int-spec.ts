// The gateway feature booted as the k8s-gateway service (Nest runtime, environment configuration):
// it joins the election from its variables and publishes resource events once it leads.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Module, type INestApplication } from '@nestjs/common';
import {
  JetStreamPublisher,
  k8sCommandContract,
  resourceEventContract,
  type ConsumerDefinition,
  resourceSubject,
  deadLetterSubject,
} from '@rolepolicy/contracts';
import { startService } from '@rolepolicy/runtime';
import {
  createNatsSandbox,
  eventually,
  freePort,
  startEmulator,
  type Emulator,
  type NatsSandbox,
} from '@rolepolicy/testing';
import { k8sGatewayEnvSpec } from '../config.js';
import { kubernetesCheck } from './kubernetes-check.js';
import { GatewayModule, GatewayService } from './gateway.module.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));

let emu: Emulator;
let sandbox: NatsSandbox;
let nc: NatsConnection;
let app: INestApplication | undefined;

beforeAll(async () => {
  emu = await startEmulator({ crdDir });
  sandbox = await createNatsSandbox();
  nc = await connect({ servers: sandbox.url });
});

afterAll(async () => {
  await app?.close();
  await nc.drain();
  await sandbox.cleanup();
  await emu.stop();
});

test('the k8s-gateway service reads its variables, leads, publishes the watched objects and counts commands', async () => {
  const root = sandbox.subject('rp');
  const consumer: ConsumerDefinition = {
    stream: sandbox.stream('cmd'),
    durable: sandbox.durable('gateway'),
    filterSubject: `${root}.k8s.cmd.>`,
    ackWaitMs: 30_000,
    maxDeliver: 5,
    maxAckPending: 16,
  };
  const streams = [
    {
      name: sandbox.stream('res'),
      subjects: [`${root}.resource.>`],
      retention: 'limits' as const,
      maxAgeMs: 600_000,
      duplicateWindowMs: 60_000,
    },
    {
      name: consumer.stream,
      subjects: [`${root}.k8s.cmd.>`],
      retention: 'workqueue' as const,
      maxAgeMs: 600_000,
      duplicateWindowMs: 60_000,
    },
  ];
  @Module({
    imports: [
      GatewayModule.forRoot({
        resourceContract: { ...resourceEventContract, subject: `${root}.resource.>` },
        resourceSubject: (kind, namespace, name) => resourceSubject(kind, namespace, name, root),
        commandContract: { ...k8sCommandContract, subject: `${root}.k8s.cmd.>` },
        commandConsumer: consumer,
        deadLetterSubject: (subject) => deadLetterSubject(subject, root),
        // An unowned ConfigMap stands for any command here; authorisation is e2e/command-authz.int-spec.ts.
        authorizeSenders: false,
      }),
    ],
  })
  class TestGatewayModule {}

  const subjects: string[] = [];
  nc.subscribe(`${root}.resource.>`, { callback: (_err, msg) => void subjects.push(msg.subject) });
  await emu
    .kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      group: 'rolepolicy.io',
      version: 'v1alpha1',
      namespace: 'svc',
      plural: 'postgrespolicies',
      body: {
        apiVersion: 'rolepolicy.io/v1alpha1',
        kind: 'PostgresPolicy',
        metadata: { name: 'orders' },
        spec: { connection: { secretRef: { name: 'db' } }, approval: 'manual' },
      },
    });
  app = await startService(
    {
      service: 'k8s-gateway',
      envSpec: k8sGatewayEnvSpec,
      module: TestGatewayModule,
      checks: (config) => [kubernetesCheck(config)],
    },
    {
      env: {
        NATS_URL: sandbox.url,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        LOG_LEVEL: 'error',
        KUBECONFIG: emu.kubeconfigPath,
        WATCH_NAMESPACE: 'svc',
        LEASE_NAMESPACE: 'svc',
        GATEWAY_IDENTITY: 'svc-gateway',
        LEASE_RETRY_MS: '250',
      },
      topology: { streams, consumers: [consumer] },
    },
  );
  const gateway = app.get(GatewayService).gateway;
  await eventually('leadership', () => gateway.isLeader(), 20_000);
  expect(gateway.identity).toBe('svc-gateway');
  await eventually(
    'the policy on the bus',
    () => subjects.includes(resourceSubject('postgrespolicy', 'svc', 'orders', root)),
    20_000,
  );

  await new JetStreamPublisher(nc).publish(
    { ...k8sCommandContract, subject: `${root}.k8s.cmd.>` },
    `${root}.k8s.cmd.planner.apply-resource`,
    {
      v: 1,
      command: 'apply-resource',
      target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'svc', name: 'counted' },
      object: { data: { a: 'b' } },
      idempotencyKey: 'metrics-1',
    },
  );
  const url = await app.getUrl();
  const metrics = await eventually(
    'the handled command in /metrics',
    async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return text.includes(`rp_messages_handled_total{consumer="${consumer.durable}"`) ? text : undefined;
    },
    20_000,
  );
  const ready = (await (await fetch(`${url}/readyz`)).json()) as { checks: Record<string, string> };
  expect(ready.checks).toEqual({ nats: 'up', kubernetes: 'up' });
  expect(metrics).toMatch(/rp_k8s_gateway_leader\{service="k8s-gateway"\} 1/);
}, 60_000);

test('the kubernetes readiness check is down, without naming the server, when the API does not answer', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rp-kubeconfig-'));
  const path = join(dir, 'kubeconfig');
  const unreachable = (await readFile(emu.kubeconfigPath, 'utf8')).replace(
    /server: .*/,
    'server: http://127.0.0.1:1',
  );
  await writeFile(path, unreachable);
  try {
    const failure = await kubernetesCheck({ KUBECONFIG: path })
      .probe()
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('the Kubernetes API did not answer GET /version');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 30_000);
