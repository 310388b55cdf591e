// The k8s-gateway against the API emulator and the real local NATS: resource changes reach the bus once
// per change plus resyncs, status commands survive a genuine 409, a crashed leader is replaced by the
// standby, and a watch that gets 410 Gone re-lists without losing a change.
import { fileURLToPath } from 'node:url';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  RESYNC_TOKEN,
  resyncMarkerContract,
  type ResyncMarkerV1,
  SecretAccessClient,
  DECISION_ADMISSION_TOKEN,
  RESOURCE_KINDS,
  ResourceCache,
  decodePayload,
  ensureTopology,
  k8sCommandContract,
  resourceEventContract,
  type ConsumerDefinition,
  type K8sCommandV1,
  type ResourceEventV1,
  type ResourceKindToken,
  parseResourceSubject,
  resourceSubject,
  deadLetterSubject,
} from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION, type Kind } from '@rolepolicy/kube';
import { parseScramVerifier, scramSha256Verifier } from '@rolepolicy/policy';
import {
  createNatsSandbox,
  eventually,
  startEmulator,
  type Emulator,
  type NatsSandbox,
} from '@rolepolicy/testing';
import type { GatewayConfig } from './gateway-config.js';
import { Gateway, kubeConfigFrom, type GatewayWiring } from './gateway.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const API_VERSION = `${GROUP}/${VERSION}`;
// Jest ignores a project-level testTimeout, so each test states its own bound (a hang guard, not a speed goal).
const TIMEOUT_MS = 60_000;

type SeenMarker = { readonly subject: string; readonly marker: ResyncMarkerV1 };
type Seen = { readonly subject: string; readonly type: string; readonly name: string; readonly rv: string };

let emu: Emulator;
let sandbox: NatsSandbox;
let nc: NatsConnection;
let wiring: GatewayWiring;
let root: string;
let co: CustomObjectsApi;
let core: CoreV1Api;
let seen: Seen[] = [];
let markers: SeenMarker[] = [];
const gateways: Gateway[] = [];
const quiet = process.env['RP_TEST_VERBOSE']
  ? { log: console.log, warn: console.warn, error: console.error }
  : { log: () => undefined, warn: () => undefined, error: () => undefined };

/** Minimal valid objects of each kind (values as in @rolepolicy/kube's conformance fixtures). */
const SPECS: Record<Kind, Record<string, unknown>> = {
  PostgresPolicy: { connection: { secretRef: { name: 'app-db' } }, approval: 'manual' },
  PostgresPolicyCandidate: { content: {}, policyRef: { name: 'app' } },
  PostgresPolicyPlan: {
    managedDatabaseIdentity: 'db-7f3a',
    policyGeneration: 1,
    policyRef: { name: 'app' },
    reconciliationMode: 'authoritative',
  },
  EphemeralAccessPolicy: {
    approval: { mode: 'Required' },
    justification: { required: false },
    maximumDuration: '4h',
    memberships: [{ inherit: true, role: 'app_reader' }],
    postgresPolicyRef: { name: 'app' },
  },
  EphemeralAccessRequest: {
    accessPolicyRef: { name: 'readers' },
    subject: { role: 'alice' },
    requestedBy: { username: 'alice@example.com' },
  },
};

function coords(kind: Kind, namespace: string) {
  return { group: GROUP, version: VERSION, plural: KIND_NAMES[kind].plural, namespace };
}

function create(
  kind: Kind,
  namespace: string,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  return co.createNamespacedCustomObject({
    ...coords(kind, namespace),
    body: { apiVersion: API_VERSION, kind, metadata: { name, ...extra }, spec: SPECS[kind] },
  });
}

function config(namespace: string, identity: string): GatewayConfig {
  return {
    KUBECONFIG: emu.kubeconfigPath,
    WATCH_NAMESPACE: namespace,
    LEASE_NAMESPACE: namespace,
    LEASE_NAME: 'k8s-gateway',
    GATEWAY_IDENTITY: identity,
    LEASE_DURATION_SECONDS: 2,
    LEASE_RETRY_MS: 250,
    RESYNC_INTERVAL_MS: 3_600_000,
    CONFLICT_RETRIES: 5,
    GATEWAY_COMMAND_CONCURRENCY: 8,
    FINGERPRINT_KEY_SECRET: 'rolepolicy-fingerprint-key',
    CLUSTER_ID: '',
    SECRET_READ_POLICY: 'referenced',
  };
}

function startGateway(namespace: string, identity: string): Gateway {
  const cfg = config(namespace, identity);
  const gateway = new Gateway(kubeConfigFrom(cfg), nc, new JetStreamPublisher(nc), cfg, wiring, quiet);
  gateways.push(gateway);
  gateway.start();
  return gateway;
}

function events(namespace: string, name: string): string[] {
  return seen
    .filter((s) => parseResourceSubject(s.subject, root)?.namespace === namespace && s.name === name)
    .map((s) => `${s.type}@${s.rv}`);
}

async function sendCommand(command: K8sCommandV1): Promise<void> {
  await new JetStreamPublisher(nc).publish(
    wiring.commandContract,
    `${root}.k8s.cmd.planner.${command.command}`,
    command,
    command.idempotencyKey,
  );
}

beforeAll(async () => {
  emu = await startEmulator({ crdDir });
  co = emu.kubeConfig().makeApiClient(CustomObjectsApi);
  core = emu.kubeConfig().makeApiClient(CoreV1Api);
  sandbox = await createNatsSandbox();
  nc = await connect({ servers: sandbox.url });
  root = sandbox.subject('rp');
  const consumer: ConsumerDefinition = {
    stream: sandbox.stream('cmd'),
    durable: sandbox.durable('gateway'),
    filterSubject: `${root}.k8s.cmd.>`,
    // Short: a stopped gateway's last pull request stays open on the server and may take the next command;
    // it is redelivered to the current leader after the ack wait.
    ackWaitMs: 3_000,
    maxDeliver: 5,
    maxAckPending: 16,
  };
  await ensureTopology(await jetstreamManager(nc), {
    streams: [
      {
        name: sandbox.stream('res'),
        subjects: [`${root}.resource.>`],
        retention: 'limits',
        maxAgeMs: 600_000,
        duplicateWindowMs: 60_000,
      },
      {
        name: consumer.stream,
        subjects: [`${root}.k8s.cmd.>`],
        retention: 'workqueue',
        maxAgeMs: 600_000,
        duplicateWindowMs: 60_000,
      },
      {
        name: sandbox.stream('dlq'),
        subjects: [`${root}.deadletter.>`],
        retention: 'limits',
        maxAgeMs: 600_000,
        duplicateWindowMs: 60_000,
      },
    ],
    consumers: [consumer],
  });
  wiring = {
    resourceContract: { ...resourceEventContract, subject: `${root}.resource.>` },
    resourceSubject: (kind, namespace, name) => resourceSubject(kind, namespace, name, root),
    commandContract: { ...k8sCommandContract, subject: `${root}.k8s.cmd.>` },
    commandConsumer: consumer,
    deadLetterSubject: (subject) => deadLetterSubject(subject, root),
    backoff: { initialMs: 100, maxMs: 1_000 },
    secretReadSubject: `${root}.k8s.secret.read`,
    secretGenerateSubject: `${root}.k8s.secret.generate`,
    // These tests drive the applier with commands no service sends (ConfigMaps without owners, Events, plans
    // of any shape); authorisation per sender is command-authz.spec.ts and e2e/command-authz.int-spec.ts.
    authorizeSenders: false,
  };
  nc.subscribe(`${root}.resource.>`, {
    callback: (_err, msg) => {
      // Whether decisions are authenticated (ADR 0026) travels beside the resources: decision-admission.int-spec.
      if (msg.subject.split('.').at(-2) === DECISION_ADMISSION_TOKEN) return;
      if (msg.subject.split('.').at(-2) === RESYNC_TOKEN) {
        const marker = decodePayload({ ...resyncMarkerContract, subject: `${root}.resource.>` }, msg.data);
        if (!marker.ok) throw new Error(marker.detail);
        markers.push({ subject: msg.subject, marker: marker.value as ResyncMarkerV1 });
        return;
      }
      const decoded = decodePayload(wiring.resourceContract, msg.data);
      if (!decoded.ok) throw new Error(decoded.detail);
      const event = decoded.value as ResourceEventV1;
      const meta = event.object.metadata as { name: string; resourceVersion?: string };
      seen.push({ subject: msg.subject, type: event.type, name: meta.name, rv: meta.resourceVersion ?? '' });
    },
  });
});

afterEach(async () => {
  emu.setRequestHook(undefined);
  emu.setHistoryLimit(10_000);
  await Promise.all(gateways.splice(0).map((g) => g.stop()));
  seen = [];
  markers = [];
});

afterAll(async () => {
  await nc.drain();
  await sandbox.cleanup();
  await emu.stop();
});

test(
  'create, update and delete of each kind reach the bus once per change; a resync republishes',
  async () => {
    const ns = 'bus';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const kinds = Object.keys(SPECS) as Kind[];
    const expected = new Map<string, string[]>();
    for (const kind of kinds) {
      const name = kind.toLowerCase();
      const created = await create(kind, ns, name);
      expected.set(name, [`upsert@${created.metadata.resourceVersion}`]);
    }
    // The plan owns a ConfigMap (its SQL artifact); the policy names Secret app-db; "unrelated" is neither.
    const plan = await co.getNamespacedCustomObject({
      ...coords('PostgresPolicyPlan', ns),
      name: 'postgrespolicyplan',
    });
    const owner = {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      name: plan.metadata.name,
      uid: plan.metadata.uid,
    };
    const cm = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'plan-sql', ownerReferences: [owner] }, data: { sql: 'select 1' } },
    });
    expected.set('plan-sql', [`upsert@${cm.metadata?.resourceVersion}`]);
    await eventually('the policy event', () => events(ns, 'postgrespolicy').length === 1);
    const secret = await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'app-db' }, stringData: { DATABASE_URL: 'postgres://x@db/app' } },
    });
    expected.set('app-db', [`upsert@${secret.metadata?.resourceVersion}`]);
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'unrelated' }, stringData: { k: 'v' } },
    });

    for (const kind of kinds) {
      const name = kind.toLowerCase();
      const updated = await co.patchNamespacedCustomObject(
        { ...coords(kind, ns), name, body: { metadata: { labels: { touched: 'yes' } } } },
        merge,
      );
      expected.get(name)!.push(`upsert@${updated.metadata.resourceVersion}`);
    }
    const cm2 = await core.patchNamespacedConfigMap(
      { namespace: ns, name: 'plan-sql', body: { data: { sql: 'select 2' } } },
      merge,
    );
    expected.get('plan-sql')!.push(`upsert@${cm2.metadata?.resourceVersion}`);
    for (const kind of kinds.filter((k) => k !== 'PostgresPolicyPlan')) {
      const name = kind.toLowerCase();
      await co.deleteNamespacedCustomObject({ ...coords(kind, ns), name });
      expected.get(name)!.push('delete@');
    }
    await eventually('every change on the bus', () =>
      [...expected].every(([name, want]) => events(ns, name).length >= want.length),
    );
    for (const [name, want] of expected) {
      expect({
        name,
        events: events(ns, name).map((e) => (e.startsWith('delete@') ? 'delete@' : e)),
      }).toEqual({
        name,
        events: want,
      });
    }
    expect(events(ns, 'unrelated')).toEqual([]);
    expect(seen.find((s) => s.name === 'postgrespolicyplan')?.subject).toBe(
      resourceSubject('postgrespolicyplan', ns, 'postgrespolicyplan', root),
    );

    const before = events(ns, 'postgrespolicyplan').length;
    await gateway.resync();
    await eventually('the resync', () => events(ns, 'postgrespolicyplan').length === before + 1);
    expect(events(ns, 'postgrespolicyplan').at(-1)).toBe(events(ns, 'postgrespolicyplan').at(-2));
    expect(events(ns, 'unrelated')).toEqual([]);
  },
  TIMEOUT_MS,
);

test(
  'a patch-status command survives a concurrent update: 409, re-read, then success',
  async () => {
    const ns = 'status';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    await create('PostgresPolicy', ns, 'orders');
    const statusWrites: string[] = [];
    emu.setRequestHook(async ({ method, path }) => {
      if (method !== 'PUT' || !path.endsWith('/postgrespolicies/orders/status')) return;
      statusWrites.push(path);
      // Between the gateway's read and its write, someone else changes the spec.
      if (statusWrites.length === 1) {
        await co.patchNamespacedCustomObject(
          { ...coords('PostgresPolicy', ns), name: 'orders', body: { spec: { suspend: true } } },
          merge,
        );
      }
    });
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target: { apiVersion: API_VERSION, kind: 'PostgresPolicy', namespace: ns, name: 'orders' },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Converged' }] },
      idempotencyKey: 'status-1',
    });
    const stored = await eventually('the status write', async () => {
      const o = await co.getNamespacedCustomObject({ ...coords('PostgresPolicy', ns), name: 'orders' });
      return o.status?.conditions?.[0]?.status === 'True' ? o : undefined;
    });
    expect(statusWrites).toHaveLength(2);
    expect(stored.spec.suspend).toBe(true);
    expect(stored.metadata.generation).toBe(2);
  },
  TIMEOUT_MS,
);

test(
  'a run of status writes reads nothing the informers hold; a write by someone else in between is re-read, not lost',
  async () => {
    const ns = 'status-run';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    await create('PostgresPolicy', ns, 'orders');
    await eventually('the policy published', () => events(ns, 'orders').length > 0);
    const requests: string[] = [];
    emu.setRequestHook(({ method, path }) => {
      if (path.includes('/postgrespolicies/orders'))
        requests.push(`${method} ${path.endsWith('/status') ? 'status' : 'object'}`);
    });
    const write = async (n: number, status: Record<string, unknown>) => {
      await sendCommand({
        v: 1,
        command: 'patch-status',
        target: { apiVersion: API_VERSION, kind: 'PostgresPolicy', namespace: ns, name: 'orders' },
        status,
        idempotencyKey: `status-run-${n}`,
      });
      // Read back by listing, so the hook (on the object's own path) sees the gateway's requests only.
      return eventually(`status write ${n}`, async () => {
        const list = await co.listNamespacedCustomObject(coords('PostgresPolicy', ns));
        const o = (list.items as Array<{ metadata: { name: string }; status?: Record<string, any> }>).find(
          (item) => item.metadata.name === 'orders',
        );
        return o?.status?.['last_error'] === status['last_error'] ? o : undefined;
      });
    };
    await write(1, { last_error: 'one' });
    await write(2, { last_error: 'two' });
    await write(3, { last_error: 'three', observed_generation: 1 });
    // The first write starts from the informers' copy, the next two from the gateway's own last write.
    expect(requests).toEqual(['PUT status', 'PUT status', 'PUT status']);

    // Someone else writes the status, and the informers see it: the next write starts from their copy.
    const other = await co.patchNamespacedCustomObjectStatus(
      { ...coords('PostgresPolicy', ns), name: 'orders', body: { status: { change_summary: { total: 7 } } } },
      merge,
    );
    await eventually('the other write seen', () =>
      events(ns, 'orders').includes(`upsert@${other.metadata.resourceVersion}`),
    );
    requests.length = 0;
    const after = await write(4, { last_error: 'four' });
    expect(requests).toEqual(['PUT status']);
    expect(after.status?.['change_summary']?.total).toBe(7);
    expect(after.status?.['observed_generation']).toBe(1);
    emu.setRequestHook(undefined);
  },
  TIMEOUT_MS,
);

test(
  'a status write after someone else wrote the object is one request once the informers saw it, and right when they did not',
  async () => {
    const ns = 'status-after-other';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    await create('PostgresPolicy', ns, 'orders');
    await eventually('the policy published', () => events(ns, 'orders').length > 0);
    const policyPath = `/apis/${GROUP}/${VERSION}/namespaces/${ns}/postgrespolicies`;
    const requests: string[] = [];
    const answers: Promise<number>[] = [];
    let watchHeld = Promise.resolve();
    emu.setRequestHook(async ({ method, path, query, responded }) => {
      // A held watch: the informers do not see what is written meanwhile.
      if (path === policyPath && query.get('watch') === 'true') await watchHeld;
      if (!path.startsWith(`${policyPath}/orders`)) return;
      requests.push(`${method} ${path.endsWith('/status') ? 'status' : 'object'}`);
      answers.push(responded);
    });
    const write = async (n: number, lastError: string) => {
      // Only the gateway's requests from here on count (not the test's own patch before).
      requests.length = 0;
      answers.length = 0;
      await sendCommand({
        v: 1,
        command: 'patch-status',
        target: { apiVersion: API_VERSION, kind: 'PostgresPolicy', namespace: ns, name: 'orders' },
        status: { last_error: lastError },
        idempotencyKey: `status-after-other-${n}`,
      });
      await eventually(`status write ${n}`, async () => {
        const list = await co.listNamespacedCustomObject(coords('PostgresPolicy', ns));
        const o = (list.items as Array<{ metadata: { name: string }; status?: Record<string, any> }>).find(
          (item) => item.metadata.name === 'orders',
        );
        return o?.status?.['last_error'] === lastError;
      });
      const sent = requests.splice(0);
      return { sent, codes: await Promise.all(answers.splice(0)) };
    };
    // A force-reconcile's annotation (or a user's edit of the spec) lands after the gateway's status write.
    const annotate = (at: string) =>
      co.patchNamespacedCustomObject(
        {
          ...coords('PostgresPolicy', ns),
          name: 'orders',
          body: { metadata: { annotations: { 'rolepolicy.io/reconcile-requested-at': at } } },
        },
        merge,
      );
    await write(1, 'one');
    const annotated = await annotate('2026-11-28T09:00:00Z');
    await eventually('the annotation seen', () =>
      events(ns, 'orders').includes(`upsert@${annotated.metadata.resourceVersion}`),
    );
    expect(await write(2, 'two')).toEqual({ sent: ['PUT status'], codes: [200] });

    // The informers have not seen the next annotation yet: the write answers 409 and the retry reads.
    let release!: () => void;
    watchHeld = new Promise((resolve) => (release = resolve));
    emu.endWatches();
    await annotate('2026-11-28T09:05:00Z');
    try {
      expect(await write(3, 'three')).toEqual({
        sent: ['PUT status', 'GET object', 'PUT status'],
        codes: [409, 200, 200],
      });
    } finally {
      release();
    }
    const stored = await co.getNamespacedCustomObject({ ...coords('PostgresPolicy', ns), name: 'orders' });
    expect(stored.metadata.annotations['rolepolicy.io/reconcile-requested-at']).toBe('2026-11-28T09:05:00Z');
    expect(stored.status.last_error).toBe('three');
  },
  TIMEOUT_MS,
);

test(
  'a patch-status command decided on an outdated resourceVersion is reported, not applied',
  async () => {
    const ns = 'stale';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const created = await create('PostgresPolicy', ns, 'orders');
    await co.patchNamespacedCustomObject(
      { ...coords('PostgresPolicy', ns), name: 'orders', body: { spec: { suspend: true } } },
      merge,
    );
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target: { apiVersion: API_VERSION, kind: 'PostgresPolicy', namespace: ns, name: 'orders' },
      status: { last_error: 'never written' },
      resourceVersion: created.metadata.resourceVersion,
      idempotencyKey: 'stale-1',
    });
    const warning = await eventually(
      'a Warning event',
      async () => (await core.listNamespacedEvent({ namespace: ns })).items[0],
    );
    expect(warning.reason).toBe('CommandStale');
    expect(warning.involvedObject.name).toBe('orders');
    const stored = await co.getNamespacedCustomObject({ ...coords('PostgresPolicy', ns), name: 'orders' });
    expect(stored.status?.last_error).toBeUndefined();
  },
  TIMEOUT_MS,
);

test(
  'a status write that would move an Applied plan to another phase is refused; the plan stays Applied',
  async () => {
    const ns = 'final';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    await create('PostgresPolicyPlan', ns, 'ran');
    const target = { apiVersion: API_VERSION, kind: 'PostgresPolicyPlan', namespace: ns, name: 'ran' };
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target,
      status: { phase: 'Applied', appliedAt: '2026-11-27T05:52:15.886Z' },
      idempotencyKey: 'final-1',
    });
    await eventually('Applied', async () => {
      const o = await co.getNamespacedCustomObject({ ...coords('PostgresPolicyPlan', ns), name: 'ran' });
      return o.status?.phase === 'Applied';
    });
    // A planner pass on a stale view: the database already matches, so it supersedes the plan.
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target,
      status: { phase: 'Superseded' },
      idempotencyKey: 'final-2',
    });
    const warning = await eventually('a Warning event', async () =>
      (await core.listNamespacedEvent({ namespace: ns })).items.find((e) => e.reason === 'CommandRejected'),
    );
    expect(warning.message).toContain('the plan is Applied: its phase is final');
    const stored = await co.getNamespacedCustomObject({ ...coords('PostgresPolicyPlan', ns), name: 'ran' });
    expect(stored.status).toMatchObject({ phase: 'Applied', appliedAt: '2026-11-27T05:52:15.886Z' });
  },
  TIMEOUT_MS,
);

test(
  'apply-resource creates then replaces; delete-resource deletes and tolerates absence',
  async () => {
    const ns = 'apply';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const target = { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'artifact' };
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target,
      object: { data: { sql: 'a' } },
      idempotencyKey: 'a-1',
    });
    await eventually(
      'the create',
      async () => (await core.listNamespacedConfigMap({ namespace: ns })).items.length === 1,
    );
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target,
      object: { data: { sql: 'b' } },
      idempotencyKey: 'a-2',
    });
    await eventually(
      'the replace',
      async () =>
        (await core.readNamespacedConfigMap({ namespace: ns, name: 'artifact' })).data?.['sql'] === 'b',
    );
    await sendCommand({ v: 1, command: 'delete-resource', target, idempotencyKey: 'a-3' });
    await sendCommand({ v: 1, command: 'delete-resource', target, idempotencyKey: 'a-4' });
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: { ...target, name: 'marker' },
      object: {},
      idempotencyKey: 'a-5',
    });
    await eventually('the marker after both deletes', async () => {
      const names = (await core.listNamespacedConfigMap({ namespace: ns })).items.map(
        (c) => c.metadata?.name,
      );
      return names.join() === 'marker';
    });
  },
  TIMEOUT_MS,
);

test(
  'apply-resource createOnly keeps an existing object; status is written right after the create',
  async () => {
    const ns = 'create-only';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'plan-sql' };
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: configMap,
      object: { data: { sql: 'select 1' } },
      createOnly: true,
      idempotencyKey: 'co-1',
    });
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: configMap,
      object: { data: { sql: 'select 2' } },
      createOnly: true,
      idempotencyKey: 'co-2',
    });
    const plan = { apiVersion: API_VERSION, kind: 'PostgresPolicyPlan', namespace: ns, name: 'with-status' };
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: plan,
      object: { spec: SPECS.PostgresPolicyPlan },
      status: { phase: 'Pending', changeDigest: 'sha256:abc' },
      idempotencyKey: 'co-3',
    });
    const created: any = await eventually('the plan with its status', async () => {
      const all: any = await co.listNamespacedCustomObject(coords('PostgresPolicyPlan', ns));
      return all.items.find((p: any) => p.status?.phase === 'Pending');
    });
    expect(created.status.changeDigest).toBe('sha256:abc');
    // Commands apply in order, so the second ConfigMap command ran before the plan appeared.
    const stored = await core.readNamespacedConfigMap({ namespace: ns, name: 'plan-sql' });
    expect(stored.data?.['sql']).toBe('select 1');
  },
  TIMEOUT_MS,
);

test(
  'killing the leader hands over to the standby, which then publishes and applies commands',
  async () => {
    const ns = 'handover';
    const a = startGateway(ns, 'gw-a');
    const b = startGateway(ns, 'gw-b');
    const leader = await eventually('a leader', () => (a.isLeader() ? a : b.isLeader() ? b : undefined));
    const standby = leader === a ? b : a;
    expect(standby.isLeader()).toBe(false);
    await leader.stop({ releaseLease: false });
    await eventually('the standby to take over', () => standby.isLeader());
    const lease = await emu
      .kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: ns, name: 'k8s-gateway' });
    expect(lease.spec?.holderIdentity).toBe(standby.identity);
    expect(lease.spec?.leaseTransitions).toBe(1);
    const created = await create('PostgresPolicy', ns, 'after-handover');
    await eventually('the new leader publishing', () =>
      events(ns, 'after-handover').includes(`upsert@${created.metadata.resourceVersion}`),
    );
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'from-new-leader' },
      object: { data: { ok: 'yes' } },
      idempotencyKey: 'handover-1',
    });
    await eventually(
      'the command applied',
      async () => (await core.listNamespacedConfigMap({ namespace: ns })).items.length === 1,
    );
  },
  TIMEOUT_MS,
);

test(
  'a watch that gets 410 Gone re-lists without losing the changes made meanwhile',
  async () => {
    const ns = 'gone';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    await create('PostgresPolicy', ns, 'keep');
    await create('PostgresPolicy', ns, 'drop');
    await eventually('both adds', () => events(ns, 'keep').length === 1 && events(ns, 'drop').length === 1);
    // Hold the informers' re-watch until the changes are made and the history is too short to replay them.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    emu.setRequestHook(async ({ query }) => {
      if (query.get('watch') !== 'true') return;
      held += 1;
      await gate;
    });
    emu.endWatches();
    await eventually('the informers to re-watch', () => held >= 1);
    emu.setHistoryLimit(1);
    const updated = await co.patchNamespacedCustomObject(
      { ...coords('PostgresPolicy', ns), name: 'keep', body: { spec: { suspend: true } } },
      merge,
    );
    await co.deleteNamespacedCustomObject({ ...coords('PostgresPolicy', ns), name: 'drop' });
    const added = await create('PostgresPolicy', ns, 'new');
    emu.setRequestHook(undefined);
    release();
    await eventually(
      'the changes after the re-list',
      () =>
        events(ns, 'keep').includes(`upsert@${updated.metadata.resourceVersion}`) &&
        events(ns, 'drop').some((e) => e.startsWith('delete@')) &&
        events(ns, 'new').includes(`upsert@${added.metadata.resourceVersion}`),
    );
    expect(events(ns, 'keep')).toHaveLength(2);
    expect(events(ns, 'drop')).toHaveLength(2);
    expect(events(ns, 'new')).toHaveLength(1);
  },
  TIMEOUT_MS,
);

test(
  'with an empty WATCH_NAMESPACE the gateway watches the whole cluster',
  async () => {
    const cfg = { ...config('', 'gw-cluster'), LEASE_NAMESPACE: 'cluster-lease' };
    const gateway = new Gateway(kubeConfigFrom(cfg), nc, new JetStreamPublisher(nc), cfg, wiring, quiet);
    gateways.push(gateway);
    gateway.start();
    await eventually('leadership', () => gateway.isLeader());
    const one = await create('PostgresPolicy', 'cluster-a', 'p');
    const two = await create('PostgresPolicy', 'cluster-b', 'p');
    await eventually(
      'both namespaces on the bus',
      () =>
        events('cluster-a', 'p').includes(`upsert@${one.metadata.resourceVersion}`) &&
        events('cluster-b', 'p').includes(`upsert@${two.metadata.resourceVersion}`),
    );
  },
  TIMEOUT_MS,
);

test(
  'Secret values cannot be sent as commands, and values in a refused command never reach logs or Events',
  async () => {
    const ns = 'secrets';
    const lines: string[] = [];
    const capture = {
      log: (m: string) => void lines.push(m),
      warn: (m: string) => void lines.push(m),
      error: (m: string) => void lines.push(m),
    };
    const cfg = config(ns, 'gw-secrets');
    const gateway = new Gateway(kubeConfigFrom(cfg), nc, new JetStreamPublisher(nc), cfg, wiring, capture);
    gateways.push(gateway);
    gateway.start();
    await eventually('leadership', () => gateway.isLeader());
    const secretValue = 'hunter2-super-secret';
    const target = { apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'app-pw' };
    // A command rests in a stream: the contract refuses a Secret before it is sent.
    await expect(
      sendCommand({
        v: 1,
        command: 'apply-resource',
        target,
        object: { stringData: { password: secretValue } },
        idempotencyKey: 's-1',
      } as K8sCommandV1),
    ).rejects.toThrow('/target/kind');
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'app-pw' }, stringData: { password: secretValue } },
    });
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target,
      status: { password: secretValue },
      idempotencyKey: 's-2',
    });
    const warning = await eventually(
      'the rejection Event',
      async () => (await core.listNamespacedEvent({ namespace: ns })).items[0],
    );
    const stored = await core.readNamespacedSecret({ namespace: ns, name: 'app-pw' });
    expect(stored.data?.['password']).toBe(Buffer.from(secretValue).toString('base64'));
    expect(warning.reason).toBe('CommandRejected');
    const visible = [...lines, warning.message ?? ''].join('\n');
    expect(visible).not.toContain(secretValue);
    expect(visible).not.toContain(Buffer.from(secretValue).toString('base64'));
  },
  TIMEOUT_MS,
);

test(
  'plans are created, updated and deleted by command, and Events are emitted by command',
  async () => {
    const ns = 'plans';
    const gateway = startGateway(ns, 'gw-plans');
    await eventually('leadership', () => gateway.isLeader());
    const target = {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      namespace: ns,
      name: 'orders-plan-1',
    };
    const plan = { spec: SPECS.PostgresPolicyPlan };
    await sendCommand({ v: 1, command: 'apply-resource', target, object: plan, idempotencyKey: 'p-1' });
    const created = await eventually('the plan', () =>
      co
        .getNamespacedCustomObject({ ...coords('PostgresPolicyPlan', ns), name: 'orders-plan-1' })
        .catch(() => undefined),
    );
    expect(created.metadata.generation).toBe(1);
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target,
      object: { ...plan, metadata: { labels: { 'rolepolicy.io/policy': 'orders' } } },
      idempotencyKey: 'p-2',
    });
    await eventually('the label', async () => {
      const o = await co.getNamespacedCustomObject({
        ...coords('PostgresPolicyPlan', ns),
        name: 'orders-plan-1',
      });
      return o.metadata.labels?.['rolepolicy.io/policy'] === 'orders';
    });
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: { apiVersion: 'v1', kind: 'Event', namespace: ns, name: 'orders-plan-1.applied' },
      object: {
        involvedObject: { ...target, uid: created.metadata.uid },
        reason: 'PlanCreated',
        message: 'plan orders-plan-1 awaits approval',
        type: 'Normal',
      },
      idempotencyKey: 'p-3',
    });
    await sendCommand({
      v: 1,
      command: 'delete-resource',
      target: { ...target, uid: created.metadata.uid },
      idempotencyKey: 'p-4',
    });
    await eventually('the plan deleted', async () => {
      const list = await co.listNamespacedCustomObject(coords('PostgresPolicyPlan', ns));
      return list.items.length === 0;
    });
    const emitted = (await core.listNamespacedEvent({ namespace: ns })).items.map((e) => e.reason);
    expect(emitted).toEqual(['PlanCreated']);
  },
  TIMEOUT_MS,
);

test(
  'an informer whose list fails restarts with backoff and then publishes what it missed',
  async () => {
    const ns = 'flaky';
    await create('PostgresPolicy', ns, 'early');
    let failures = 0;
    emu.setRequestHook(({ method, path, query }) => {
      if (
        method === 'GET' &&
        path.endsWith(`/namespaces/${ns}/postgrespolicies`) &&
        query.get('watch') !== 'true' &&
        failures < 3
      ) {
        failures += 1;
        throw new Error('injected list failure');
      }
    });
    const gateway = startGateway(ns, 'gw-flaky');
    await eventually('leadership', () => gateway.isLeader());
    await eventually('the policy after the restarts', () => events(ns, 'early').length === 1);
    expect(failures).toBe(3);
  },
  TIMEOUT_MS,
);

/** Every message on any subject of the sandbox (a second connection, as an eavesdropper with full rights). */
async function eavesdrop(): Promise<{ text: () => string; stop: () => Promise<void> }> {
  const spy = await connect({ servers: sandbox.url });
  const seenBytes: string[] = [];
  spy.subscribe('>', { callback: (_e, msg) => void seenBytes.push(new TextDecoder().decode(msg.data)) });
  await spy.flush();
  return { text: () => seenBytes.join('\n'), stop: () => spy.drain() };
}

test(
  'Secrets and ConfigMaps reach the stream as metadata, key names and a keyed fingerprint, never values',
  async () => {
    const ns = 'metadata-only';
    const spy = await eavesdrop();
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const url = 'postgres://app:s3cr3t-in-url@db.example:5432/app';
    const literal = 'literal-pw-never-on-the-bus';
    await create('PostgresPolicy', ns, 'app');
    await co.createNamespacedCustomObject({
      ...coords('PostgresPolicy', ns),
      body: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        metadata: {
          name: 'literal',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `{"password":"${literal}"}` },
        },
        spec: {
          connection: { params: { host: 'db', dbname: 'app', password: literal } },
          approval: 'manual',
        },
      },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: {
          name: 'app-db',
          annotations: {
            'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
              stringData: { DATABASE_URL: url },
            }),
          },
        },
        stringData: { DATABASE_URL: url },
      },
    });
    const secretEvent = (): ResourceEventV1['object'] | undefined =>
      published.find((e) => e.object.kind === 'Secret' && e.object.metadata.name === 'app-db')?.object;
    const published: ResourceEventV1[] = [];
    const sub = nc.subscribe(`${root}.resource.>`, {
      callback: (_e, msg) => {
        const decoded = decodePayload(wiring.resourceContract, msg.data);
        if (decoded.ok) published.push(decoded.value as ResourceEventV1);
      },
    });
    await gateway.resync();
    const first = await eventually('the Secret event', secretEvent);
    expect(first).toMatchObject({
      keys: ['DATABASE_URL'],
      fingerprint: expect.stringMatching(/^hmac-sha256:/),
    });
    expect(first).not.toHaveProperty('data');
    expect(first.metadata).not.toHaveProperty('annotations');
    const policy = published.find((e) => e.object.metadata.name === 'literal')!.object as any;
    expect(policy.spec.connection.params.password).toBe('[REDACTED]');
    expect(policy.metadata.annotations ?? {}).not.toHaveProperty(
      'kubectl.kubernetes.io/last-applied-configuration',
    );
    // A changed value changes the fingerprint; the fingerprint is not a plain hash of the value.
    published.length = 0;
    await core.patchNamespacedSecret(
      { namespace: ns, name: 'app-db', body: { stringData: { DATABASE_URL: `${url}?x=1` } } },
      merge,
    );
    const second = await eventually('the updated Secret event', secretEvent);
    expect(second['fingerprint']).not.toBe(first['fingerprint']);
    const { createHash } = await import('node:crypto');
    const b64 = Buffer.from(url).toString('base64');
    expect(first['fingerprint']).not.toContain(createHash('sha256').update(b64).digest('hex'));
    sub.unsubscribe();
    await spy.stop();
    for (const value of [url, literal, 's3cr3t-in-url', b64, Buffer.from(literal).toString('base64')]) {
      expect(spy.text()).not.toContain(value);
    }
  },
  TIMEOUT_MS,
);

test(
  'Secret values are read from the API at the moment of use, only for referenced Secrets, sealed to the requester',
  async () => {
    const ns = 'reads';
    const spy = await eavesdrop();
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const client = new SecretAccessClient(nc, {
      readSubject: wiring.secretReadSubject,
      generateSubject: wiring.secretGenerateSubject,
      timeoutMs: 5_000,
    });
    await co.createNamespacedCustomObject({
      ...coords('PostgresPolicy', ns),
      body: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        metadata: { name: 'app' },
        spec: {
          connection: {
            params: {
              host: 'db',
              dbname: 'app',
              password: 'literal-pw-1',
              usernameSecret: { name: 'user', key: 'u' },
            },
          },
          approval: 'manual',
        },
      },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'user' }, stringData: { u: 'reader-v1' } },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'other' }, stringData: { k: 'not-yours' } },
    });
    const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString();

    const read = await client.read(ns, ['user', 'gone'], { literalPasswordOf: 'app' });
    expect(decode(read.secrets.get('user')?.data['u'])).toBe('reader-v1');
    expect(read.missing).toEqual(['gone']);
    expect(read.literalPassword).toBe('literal-pw-1');
    // No cache in between: a change is visible to the very next read.
    await core.patchNamespacedSecret(
      { namespace: ns, name: 'user', body: { stringData: { u: 'reader-v2' } } },
      merge,
    );
    const again = await client.read(ns, ['user']);
    expect(decode(again.secrets.get('user')?.data['u'])).toBe('reader-v2');
    expect(again.secrets.get('user')?.metadata.resourceVersion).not.toBe(
      read.secrets.get('user')?.metadata.resourceVersion,
    );
    // A Secret no rolepolicy.io object names or owns is not handed out.
    await expect(client.read(ns, ['other'])).rejects.toMatchObject({ reason: 'NotReferenced' });
    await spy.stop();
    for (const value of ['reader-v1', 'reader-v2', 'literal-pw-1', 'not-yours']) {
      expect(spy.text()).not.toContain(value);
      expect(spy.text()).not.toContain(Buffer.from(value).toString('base64'));
    }
  },
  TIMEOUT_MS,
);

test(
  'a generated password is drawn where its Secret is written: create-only, verifier beside it, never on the bus',
  async () => {
    const ns = 'generate';
    const spy = await eavesdrop();
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const policy = await create('PostgresPolicy', ns, 'app');
    const client = new SecretAccessClient(nc, {
      readSubject: wiring.secretReadSubject,
      generateSubject: wiring.secretGenerateSubject,
      timeoutMs: 5_000,
    });
    const template = {
      apiVersion: 'v1' as const,
      kind: 'Secret' as const,
      type: 'Opaque' as const,
      metadata: {
        name: 'app-gen-svc',
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: 'PostgresPolicy',
            name: 'app',
            uid: policy.metadata.uid,
            controller: true,
          },
        ],
      },
    };
    const first = await client.generate({ template, secretKey: 'password', length: 40 });
    expect(first.created).toBe(true);
    const stored = await core.readNamespacedSecret({ namespace: ns, name: 'app-gen-svc' });
    const password = Buffer.from(stored.data?.['password'] ?? '', 'base64').toString();
    const verifier = Buffer.from(stored.data?.['verifier'] ?? '', 'base64').toString();
    expect(password).toMatch(/^[A-Za-z0-9_-]{40}$/);
    const parts = parseScramVerifier(verifier)!;
    expect(scramSha256Verifier(password, parts.salt, parts.iterations)).toBe(verifier);
    // Create-only: asking again keeps the first password.
    const second = await client.generate({ template, secretKey: 'password', length: 40 });
    expect(second).toMatchObject({ created: false, resourceVersion: first.resourceVersion });
    const unowned = {
      ...template,
      metadata: {
        ...template.metadata,
        ownerReferences: [{ ...template.metadata.ownerReferences[0]!, apiVersion: 'v1', kind: 'ConfigMap' }],
      },
    };
    await expect(
      client.generate({ template: unowned, secretKey: 'password', length: 40 }),
    ).rejects.toMatchObject({
      reason: 'InvalidRequest',
    });
    await spy.stop();
    expect(spy.text()).not.toContain(password);
    expect(spy.text()).not.toContain(verifier);
    expect(spy.text()).not.toContain(stored.data?.['password']);
  },
  TIMEOUT_MS,
);

test(
  'dotted, maximum-length and mixed names of every watched kind travel through the gateway into a ResourceCache',
  async () => {
    const ns = 'names';
    const gateway = startGateway(ns, 'gw-a');
    await eventually('leadership', () => gateway.isLeader());
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(longest).toHaveLength(253);
    const names = ['app.prod', longest, '0.a-b.9z', 'plain'];
    const connection = 'owner.cluster.credentials.postgresql.example.com';
    const uids = new Map<string, string>();
    const remember = (kind: ResourceKindToken, name: string, uid: string | undefined) =>
      uids.set(`${kind}/${name}`, uid ?? '');

    for (const kind of Object.keys(SPECS) as Kind[]) {
      for (const name of names) {
        const spec =
          kind === 'PostgresPolicy'
            ? { ...SPECS[kind], connection: { secretRef: { name: connection } } }
            : SPECS[kind];
        const created = await co.createNamespacedCustomObject({
          ...coords(kind, ns),
          body: { apiVersion: API_VERSION, kind, metadata: { name }, spec },
        });
        remember(kind.toLowerCase() as ResourceKindToken, name, created.metadata.uid);
      }
    }
    // Secrets: one a policy names (the dotted connection Secret), the others owned by a policy; ConfigMaps
    // owned by a plan. Unowned, unreferenced ones are not published.
    const ownerOf = async (kind: Kind, name: string) => {
      const o = await co.getNamespacedCustomObject({ ...coords(kind, ns), name });
      return { apiVersion: API_VERSION, kind, name, uid: o.metadata.uid };
    };
    const policyOwner = await ownerOf('PostgresPolicy', 'app.prod');
    const planOwner = await ownerOf('PostgresPolicyPlan', longest);
    const referenced = await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: connection }, stringData: { DATABASE_URL: 'postgres://x@db/app' } },
    });
    remember('secret', connection, referenced.metadata?.uid);
    for (const name of names) {
      const secret = await core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name, ownerReferences: [policyOwner] }, stringData: { password: 'p' } },
      });
      remember('secret', name, secret.metadata?.uid);
      const cm = await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name, ownerReferences: [planOwner] }, data: { sql: 'select 1' } },
      });
      remember('configmap', name, cm.metadata?.uid);
    }

    const cache = await ResourceCache.start(nc, {
      kinds: [...RESOURCE_KINDS],
      stream: sandbox.stream('res'),
      subjectRoot: root,
      logger: quiet,
    });
    try {
      await cache.ready;
      const missing = () =>
        [...uids].filter(([key, uid]) => {
          const [kind, name] = key.split(/\/(.*)/s) as [ResourceKindToken, string];
          const meta = cache.get(kind, ns, name)?.metadata as { uid?: string } | undefined;
          return meta?.uid !== uid;
        });
      await eventually('every object in the cache under its own name', () => missing().length === 0);
      expect(missing()).toEqual([]);
      expect(uids.size).toBe(5 * names.length + 1 + 2 * names.length);

      // On the bus the names are encoded, yet plain names stay readable and each subject decodes back.
      const subjects = seen.filter((s) => parseResourceSubject(s.subject, root)?.namespace === ns);
      expect(subjects.every((s) => parseResourceSubject(s.subject, root)?.name === s.name)).toBe(true);
      expect(subjects.map((s) => s.subject)).toContain(resourceSubject('postgrespolicy', ns, 'plain', root));
      expect(subjects.map((s) => s.subject)).toContain(
        `${root}.resource.secret.${ns}.${connection.replaceAll('.', '~')}`,
      );

      // A delete of a dotted name reaches the cache too.
      await co.deleteNamespacedCustomObject({ ...coords('PostgresPolicyCandidate', ns), name: 'app.prod' });
      await eventually(
        'the delete',
        () => cache.get('postgrespolicycandidate', ns, 'app.prod') === undefined,
      );
      expect(cache.get('postgrespolicycandidate', ns, longest)).toBeDefined();
    } finally {
      await cache.stop();
    }
  },
  TIMEOUT_MS,
);

test(
  'after each LIST and resync a marker per kind lists what the API has, with the cluster identity',
  async () => {
    const ns = 'markers';
    const kept = await create('PostgresPolicy', ns, 'kept');
    const gone = await create('PostgresPolicy', ns, 'gone');
    const clusterId = (await core.readNamespace({ name: 'kube-system' })).metadata?.uid;
    const gateway = startGateway(ns, 'gw-m');
    await eventually('leadership', () => gateway.isLeader());
    const policyMarkers = () => markers.filter((m) => m.marker.kind === 'postgrespolicy');
    await eventually('the first policy marker', () => policyMarkers().length >= 1);
    const first = policyMarkers()[0]!;
    expect(first.subject).toBe(`${root}.resource.postgrespolicy.${RESYNC_TOKEN}.0`);
    expect(first.marker).toMatchObject({ clusterId, namespace: ns, chunk: 0, chunks: 1 });
    expect(first.marker.objects.map((o) => o.uid).sort()).toEqual(
      [kept.metadata.uid, gone.metadata.uid].sort(),
    );
    // Every kind gets one, the empty ones too (they tell a consumer to drop everything of that kind).
    await eventually('a marker of every kind', () => new Set(markers.map((m) => m.marker.kind)).size === 7);

    await co.deleteNamespacedCustomObject({ ...coords('PostgresPolicy', ns), name: 'gone' });
    await eventually('the delete', () => events(ns, 'gone').some((e) => e.startsWith('delete@')));
    await gateway.resync();
    const last = policyMarkers().at(-1)!.marker;
    expect(last.objects).toEqual([
      { uid: kept.metadata.uid, resourceVersion: kept.metadata.resourceVersion },
    ]);
    expect(last.resyncId).not.toBe(first.marker.resyncId);
  },
  TIMEOUT_MS,
);

test(
  'commands about objects the API does not have are refused without an API call or an Event',
  async () => {
    const ns = 'absent';
    const policy = await create('PostgresPolicy', ns, 'real');
    const gateway = startGateway(ns, 'gw-x');
    await eventually('leadership', () => gateway.isLeader());
    await eventually('the policy event', () => events(ns, 'real').length >= 1);
    const requests: string[] = [];
    emu.setRequestHook(({ method, path }) => void requests.push(`${method} ${path}`));
    const target = { apiVersion: API_VERSION, kind: 'PostgresPolicy', namespace: ns };
    // A status write for a policy of an older API (same name, other uid), and a plan owned by it.
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target: { ...target, name: 'real', uid: 'uid-of-an-older-api' },
      status: { observed_generation: 1 },
      idempotencyKey: 'absent-1',
    });
    await sendCommand({
      v: 1,
      command: 'apply-resource',
      target: { ...target, kind: 'PostgresPolicyPlan', name: 'ghost-plan' },
      object: {
        metadata: {
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: 'PostgresPolicy',
              name: 'ghost',
              uid: 'ghost-uid',
              controller: true,
            },
          ],
        },
        spec: SPECS.PostgresPolicyPlan,
      },
      idempotencyKey: 'absent-2',
    });
    // Then one for the real policy: once it is written, the two before it have been handled.
    await sendCommand({
      v: 1,
      command: 'patch-status',
      target: { ...target, name: 'real', uid: policy.metadata.uid },
      status: { observed_generation: 1 },
      idempotencyKey: 'absent-3',
    });
    await eventually('the real status write', () =>
      requests.some((r) => r.startsWith('PUT') && r.includes('/real/status')),
    );
    expect(requests.filter((r) => r.includes('ghost') || r.includes('/events'))).toEqual([]);
    // Writes of rolepolicy.io objects only: the gateway's lease renewals are PUTs too.
    expect(requests.filter((r) => r.startsWith('PUT') && r.includes(`/${GROUP}/`))).toHaveLength(1);
    const plans = await co.listNamespacedCustomObject(coords('PostgresPolicyPlan', ns));
    expect(plans.items).toEqual([]);
  },
  TIMEOUT_MS,
);

test(
  'a resync request gets fresh markers: a cache asking before it acts drops what the API no longer has',
  async () => {
    const ns = 'refresh';
    const real = await create('PostgresPolicy', ns, 'real');
    const gateway = startGateway(ns, 'gw-r');
    await eventually('leadership', () => gateway.isLeader());
    const cache = await ResourceCache.start(nc, {
      kinds: ['postgrespolicy'],
      stream: sandbox.stream('res'),
      subjectRoot: root,
      logger: { warn: () => undefined, log: () => undefined },
    });
    try {
      await cache.ready;
      await eventually('the real policy', () => cache.get('postgrespolicy', ns, 'real'));
      // An object the API does not have, newer than every marker so far (as a stale writer could leave it).
      const ghost: ResourceEventV1 = {
        v: 1,
        type: 'upsert',
        object: {
          apiVersion: API_VERSION,
          kind: 'PostgresPolicy',
          metadata: { name: 'ghost', namespace: ns, uid: 'ghost-uid', resourceVersion: '999999999' },
        } as ResourceEventV1['object'],
        observedAt: new Date().toISOString(),
      };
      await new JetStreamPublisher(nc).publish(
        wiring.resourceContract,
        `${root}.resource.postgrespolicy.${ns}.ghost`,
        ghost,
      );
      await eventually('the ghost in the view', () => cache.get('postgrespolicy', ns, 'ghost'));

      expect(await cache.refresh()).toEqual(['postgrespolicy']);
      expect(cache.list('postgrespolicy', ns).map((o) => o.metadata.name)).toEqual(['real']);
      expect(cache.get('postgrespolicy', ns, 'real')?.metadata).toMatchObject({ uid: real.metadata.uid });
    } finally {
      await cache.stop();
    }
  },
  TIMEOUT_MS,
);
