// Test support for the executor's cluster wiring: a sandboxed resource stream fed with the objects the
// k8s-gateway would publish (policies, plans, Secrets as metadata), the gateway's Secret responder over the
// Secrets a test "created", and a log of the gateway commands the executor sends.
import type { INestApplication } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  deadLetterContract,
  decodePayload,
  ensureTopology,
  executeRequestContract,
  executeResultContract,
  k8sCommandContract,
  serveSecretAccess,
  resourceSubject,
  type K8sCommandV1,
  type SecretStore,
  type StoredSecret,
  type StreamDefinition,
} from '@rolepolicy/contracts';
import { startService } from '@rolepolicy/runtime';
import { freePort, type NatsSandbox } from '@rolepolicy/testing';
import type { PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import { executorService } from '../../service.js';
import { ExecutionModule } from '../execution.module.js';
import type { ExecutorTopology } from './harness.js';

const API_VERSION = 'rolepolicy.io/v1alpha1';

/** Sandboxed names of the cluster side: subject root, resource stream, command stream. */
export interface ClusterNames {
  readonly root: string;
  readonly resources: StreamDefinition;
  readonly commands: StreamDefinition;
}

/** Names under the same root as {@link ExecutorTopology}'s subjects. */
export function clusterNames(sandbox: NatsSandbox, topology: ExecutorTopology): ClusterNames {
  const root = topology.requestSubject.replace(/\.execute\.request$/, '');
  const base = { retention: 'limits', maxAgeMs: 600_000, duplicateWindowMs: 60_000 } as const;
  return {
    root,
    resources: { ...base, name: sandbox.stream('resources'), subjects: [`${root}.resource.>`] },
    commands: { ...base, name: sandbox.stream('commands'), subjects: [`${root}.k8s.cmd.>`] },
  };
}

/** The Secrets each sandbox root "has" (what the API would answer), keyed `namespace/name`. */
const secretsByRoot = new Map<string, Map<string, StoredSecret>>();

function secretsOf(root: string): Map<string, StoredSecret> {
  let secrets = secretsByRoot.get(root);
  if (secrets === undefined) {
    secrets = new Map();
    secretsByRoot.set(root, secrets);
  }
  return secrets;
}

/**
 * Creates the resource and command streams (the executor ensures the resource one too) and answers Secret
 * reads under the sandbox root from the Secrets published with {@link publishObject}, as the gateway would.
 */
export async function ensureClusterStreams(nc: NatsConnection, names: ClusterNames): Promise<void> {
  await ensureTopology(await jetstreamManager(nc), {
    streams: [names.resources, names.commands],
    consumers: [],
  });
  const secrets = secretsOf(names.root);
  const store: SecretStore = {
    read: async (namespace, name) => secrets.get(`${namespace}/${name}`),
    mayRead: () => ({ ok: true }),
    literalPassword: async () => undefined,
    createIfAbsent: async () => {
      throw new Error('the executor never creates Secrets');
    },
  };
  serveSecretAccess(nc, {
    readSubject: `${names.root}.k8s.secret.read`,
    generateSubject: `${names.root}.k8s.secret.generate`,
    queue: 'test-gateway',
    store,
    log: { warn: () => undefined },
  });
}

/** Starts one executor replica with the production cluster wiring on sandbox names. */
export async function startClusterExecutor(
  topology: ExecutorTopology,
  names: ClusterNames,
  natsUrl: string,
  visibilityWaitMs = 5_000,
): Promise<INestApplication> {
  @Module({
    imports: [
      ExecutionModule.register({
        requestSubject: topology.requestSubject,
        resultSubject: topology.resultSubject,
        cluster: { subjectRoot: names.root, resourceStream: names.resources.name, visibilityWaitMs },
      }),
    ],
  })
  class ClusterExecutorModule {}
  return startService(
    { ...executorService, module: ClusterExecutorModule },
    {
      env: {
        NATS_URL: natsUrl,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        LOG_LEVEL: 'log',
      },
      topology: topology.topology,
      contracts: [
        { ...executeRequestContract, subject: topology.requestSubject },
        { ...executeResultContract, subject: topology.resultSubject },
        deadLetterContract,
      ],
      deadLetterSubject: topology.deadLetterSubject,
      backoff: { initialMs: 50, maxMs: 200 },
    },
  );
}

type Kind = 'secret' | 'postgrespolicy' | 'postgrespolicyplan';

/** Publishes an object as the gateway would (`upsert`), or its deletion. */
export async function publishObject<
  T extends { readonly metadata: { readonly name: string; readonly namespace?: string } },
>(
  nc: NatsConnection,
  names: ClusterNames,
  kind: Kind,
  object: T,
  type: 'upsert' | 'delete' = 'upsert',
): Promise<void> {
  const { name, namespace } = object.metadata;
  const subject = resourceSubject(kind, namespace ?? '', name, names.root);
  let published: object = object;
  if (kind === 'secret') {
    // The API "has" the Secret; the stream gets its metadata, as from the gateway.
    const key = `${namespace ?? ''}/${name}`;
    if (type === 'delete') secretsOf(names.root).delete(key);
    else secretsOf(names.root).set(key, object as StoredSecret);
    const { data, ...rest } = object as { data?: Record<string, string> };
    published = { ...rest, keys: Object.keys(data ?? {}).sort() };
  }
  const event = { v: 1, type, object: published, observedAt: new Date().toISOString() };
  await jetstream(nc).publish(subject, new TextEncoder().encode(JSON.stringify(event)));
}

/** A Secret holding `data` (base64-encoded as the API returns it) at `resourceVersion`. */
export function secretObject(
  namespace: string,
  name: string,
  data: Readonly<Record<string, string>>,
  resourceVersion = '1',
): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  data: Record<string, string>;
} {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
  );
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, resourceVersion }, data: encoded };
}

/** A PostgresPolicy in `apply` mode with `content`, connecting through Secret `secretName`. */
export function policyObject(
  namespace: string,
  name: string,
  uid: string,
  secretName: string,
  content: object,
  extra: Partial<PostgresPolicy['spec']> = {},
): PostgresPolicy {
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    metadata: { name, namespace, uid, generation: 1 },
    spec: { connection: { secretRef: { name: secretName } }, mode: 'apply', ...content, ...extra },
  };
}

/** A plan recording `digest` with the given decision condition (`Approved` or `Denied`) and phase. */
export function planObject(
  namespace: string,
  name: string,
  policyName: string,
  approved: { digest: string; encoding: string; physical: string | null; logical: string | null },
  decision: 'Approved' | 'Denied',
  phase: 'Approved' | 'Pending' | 'Rejected' = decision === 'Approved' ? 'Approved' : 'Pending',
): PostgresPolicyPlan {
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicyPlan',
    metadata: { name, namespace },
    spec: {
      managedDatabaseIdentity: approved.logical ?? 'unknown',
      policyGeneration: 1,
      policyRef: { name: policyName },
      reconciliationMode: 'authoritative',
    },
    status: {
      phase,
      conditions: [
        {
          type: decision,
          status: 'True',
          reason: decision === 'Approved' ? 'ApprovedByUser' : 'DeniedByUser',
          message: 'decided by the test',
          last_transition_time: new Date().toISOString(),
        },
      ],
      decidedBy: { username: 'tester' },
      changeDigest: approved.digest,
      changeDigestEncoding: approved.encoding,
      targetPhysicalIdentity: approved.physical,
      targetLogicalFingerprint: approved.logical,
    },
  };
}

/** Every gateway command the executor sent so far (read from the sandbox command stream). */
export async function commandsSent(nc: NatsConnection, names: ClusterNames): Promise<K8sCommandV1[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(names.commands.name);
  const commands: K8sCommandV1[] = [];
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const stored = await jsm.streams.getMessage(names.commands.name, { seq }).catch(() => null);
    if (!stored) continue;
    const decoded = decodePayload({ ...k8sCommandContract, subject: `${names.root}.k8s.cmd.>` }, stored.data);
    if (decoded.ok) commands.push(decoded.value);
  }
  return commands;
}
