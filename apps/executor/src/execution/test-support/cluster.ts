// Test support for the executor's cluster wiring: a sandboxed resource stream fed with the objects the
// k8s-gateway would publish (policies, plans, Secrets as metadata), the gateway's Secret responder over the
// Secrets a test "created", and a log of the gateway commands the executor sends. The gateway's part is
// @rolepolicy/testing's stand-in (spine-standins.ts), which `npm run bench -- execution` plays too.
import type { INestApplication } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  deadLetterContract,
  decodePayload,
  ensureTopology,
  executeRequestContract,
  executeResultContract,
  k8sCommandContract,
  type K8sCommandV1,
  type StreamDefinition,
} from '@rolepolicy/contracts';
import { startService } from '@rolepolicy/runtime';
import {
  ApiSecrets,
  freePort,
  planObject,
  policyObject as sharedPolicyObject,
  publishAsGateway,
  secretObject,
  type NatsSandbox,
  type StandinKind,
} from '@rolepolicy/testing';
import type { PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { executorService } from '../../service.js';
import { ExecutionModule } from '../execution.module.js';
import type { ExecutorTopology } from './harness.js';

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

/** The Secrets each sandbox root "has" (what the API would answer). */
const secretsByRoot = new Map<string, ApiSecrets>();

function secretsOf(root: string): ApiSecrets {
  let secrets = secretsByRoot.get(root);
  if (secrets === undefined) {
    secrets = new ApiSecrets();
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
  secretsOf(names.root).serve(nc, { root: names.root, queue: 'test-gateway' });
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

/** Publishes an object as the gateway would (`upsert`), or its deletion. */
export async function publishObject<
  T extends { readonly metadata: { readonly name: string; readonly namespace?: string } },
>(
  nc: NatsConnection,
  names: ClusterNames,
  kind: StandinKind,
  object: T,
  type: 'upsert' | 'delete' = 'upsert',
): Promise<void> {
  await publishAsGateway(nc, kind, object, { root: names.root, type, secrets: secretsOf(names.root) });
}

export { planObject, secretObject };

/** A PostgresPolicy in `apply` mode with `content`, connecting through Secret `secretName`. */
export function policyObject(
  namespace: string,
  name: string,
  uid: string,
  secretName: string,
  content: object,
  extra: Partial<PostgresPolicy['spec']> = {},
): PostgresPolicy {
  return sharedPolicyObject(namespace, name, uid, {
    connection: { secretRef: { name: secretName } },
    mode: 'apply',
    ...content,
    ...extra,
  });
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
