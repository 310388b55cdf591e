// Test harness of the executor: a sandboxed JetStream topology, executor replicas started in-process with
// an in-memory secret resolver and a lock-holder probe, and the planner's side (plan + approved digest).
import { Module, type INestApplication } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  deadLetterContract,
  decodePayload,
  encodePayload,
  ensureTopology,
  executeRequestContract,
  executeResultContract,
  type ExecuteRequestV2,
  type ExecuteResultV1,
  type Topology,
  deadLetterSubject,
} from '@rolepolicy/contracts';
import { inspect, openConnection, type ConnectionSpec } from '@rolepolicy/catalog';
import type { PolicyContent } from '@rolepolicy/policy';
import { startService } from '@rolepolicy/runtime';
import { freePort, withPlannerApproval, type NatsSandbox } from '@rolepolicy/testing';
import { executorService } from '../../service.js';
import { ExecutionModule } from '../execution.module.js';
import type { LockHolderProbe } from '../options.js';
import { expandRequest, replan } from '../replan.js';
import { inMemorySecrets } from '../secrets.js';

/** Namespace every test request lives in. */
export const NAMESPACE = 'team-a';

/** Sandboxed subjects and topology of one test file. */
export interface ExecutorTopology {
  readonly stream: string;
  readonly resultDurable: string;
  readonly requestSubject: string;
  readonly resultSubject: string;
  readonly topology: Topology;
  readonly deadLetterSubject: (subject: string) => string;
}

/** Builds the sandbox topology: one work-queue stream for requests and results, one dead-letter stream. */
export function executorTopology(sandbox: NatsSandbox): ExecutorTopology {
  const root = sandbox.subject('x');
  const stream = sandbox.stream('execute');
  return {
    stream,
    resultDurable: sandbox.durable('results'),
    requestSubject: `${root}.execute.request`,
    resultSubject: `${root}.execute.result`,
    deadLetterSubject: (subject) => deadLetterSubject(subject, root),
    topology: {
      streams: [
        {
          name: stream,
          subjects: [`${root}.execute.>`],
          retention: 'workqueue',
          maxAgeMs: 600_000,
          duplicateWindowMs: 60_000,
        },
        {
          name: sandbox.stream('dead'),
          subjects: [`${root}.deadletter.>`],
          retention: 'limits',
          maxAgeMs: 600_000,
          duplicateWindowMs: 60_000,
        },
      ],
      consumers: [
        {
          stream,
          durable: sandbox.durable('executor'),
          filterSubject: `${root}.execute.request`,
          ackWaitMs: 30_000,
          maxDeliver: 5,
          maxAckPending: 64,
        },
      ],
    },
  };
}

/** Connections (by `namespace/target`) and passwords (by `namespace/role/version`) the resolver serves. */
export interface SecretStore {
  readonly connections: Map<string, ConnectionSpec>;
  readonly passwords: Map<string, string>;
}

/** Lock-holder log written inside each executing transaction (table `rp_lock_log` of the target). */
export function lockLogProbe(replica: string): LockHolderProbe {
  const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;
  const row = (request: ExecuteRequestV2, event: string) => {
    const sql = `INSERT INTO public.rp_lock_log (replica, plan, event) VALUES (${literal(replica)}, ${literal(request.plan.name)}, ${literal(event)});`;
    return { sql, redacted: sql };
  };
  return { around: (request) => ({ before: [row(request, 'enter')], after: [row(request, 'exit')] }) };
}

/** The DDL of the lock-holder log; run once per target database. */
export const LOCK_LOG_DDL =
  'CREATE TABLE public.rp_lock_log (id bigserial PRIMARY KEY, replica text NOT NULL, plan text NOT NULL, ' +
  'event text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())';

/** Starts one executor replica in-process on the sandbox topology. */
export async function startExecutor(
  names: ExecutorTopology,
  natsUrl: string,
  secrets: SecretStore,
  replica: string,
  /** More variables for the replica (e.g. EXECUTOR_CONCURRENCY). */
  env: Readonly<Record<string, string>> = {},
): Promise<INestApplication> {
  @Module({
    imports: [
      ExecutionModule.register({
        requestSubject: names.requestSubject,
        resultSubject: names.resultSubject,
        secrets: inMemorySecrets(secrets),
        probe: lockLogProbe(replica),
      }),
    ],
  })
  class TestExecutorModule {}
  return startService(
    { ...executorService, module: TestExecutorModule },
    {
      env: {
        NATS_URL: natsUrl,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        LOG_LEVEL: 'log',
        ...env,
      },
      topology: names.topology,
      contracts: [
        { ...executeRequestContract, subject: names.requestSubject },
        { ...executeResultContract, subject: names.resultSubject },
        deadLetterContract,
      ],
      deadLetterSubject: names.deadLetterSubject,
      // Fast retries, so a test can watch a transient failure run out of deliveries.
      backoff: { initialMs: 50, maxMs: 200 },
    },
  );
}

/** What the planner would send for `content` on the database at `url`: the plan is computed now. */
export async function approvedRequest(options: {
  readonly secrets: SecretStore;
  readonly url: string;
  readonly planName: string;
  readonly content: PolicyContent;
  readonly passwordSources?: Readonly<Record<string, string>>;
}): Promise<{ request: ExecuteRequestV2; changeCount: number }> {
  const target = `${NAMESPACE}/${options.planName}-conn/DATABASE_URL`;
  options.secrets.connections.set(`${NAMESPACE}/${target}`, { url: options.url });
  const draft: ExecuteRequestV2 = {
    v: 2,
    plan: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicyPlan',
      namespace: NAMESPACE,
      name: options.planName,
    },
    policy: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      namespace: NAMESPACE,
      name: 'policy',
      uid: `uid-${options.planName}`,
    },
    changeDigest: 'pending',
    changeDigestEncoding: 'pending',
    idempotencyKey: `uid-${options.planName}/${options.planName}`,
    target,
    content: options.content,
    mode: 'authoritative',
    allowSchemaOwnerTransfers: false,
    requirePhysicalIdentity: false,
    approvedIdentity: { physical: null, logical: null },
    passwordSources: { ...options.passwordSources },
    appliedPasswordSourceVersions: {},
  };
  const expanded = expandRequest(draft);
  if (!expanded.ok) throw new Error(expanded.message);
  const connection = openConnection({ url: options.url });
  try {
    const snapshot = await inspect(connection.db, expanded.scope, connection.target);
    const { plan, digest } = replan(draft, expanded, snapshot);
    return { request: withPlannerApproval(draft, digest, snapshot), changeCount: plan.changes.length };
  } finally {
    await connection.close();
  }
}

/** Publishes any JSON on the sandbox work subject, bypassing the sender-side contract check. */
export async function publishRaw(
  nc: NatsConnection,
  names: ExecutorTopology,
  payload: unknown,
): Promise<void> {
  await jetstream(nc).publish(names.requestSubject, new TextEncoder().encode(JSON.stringify(payload)));
}

/** Publishes a request on the sandbox work subject (no msgID: a resend is a genuine second delivery). */
export async function publishRequest(
  nc: NatsConnection,
  names: ExecutorTopology,
  request: ExecuteRequestV2,
): Promise<void> {
  await jetstream(nc).publish(
    names.requestSubject,
    encodePayload({ ...executeRequestContract, subject: names.requestSubject }, request),
  );
}

/**
 * Collects results the way the planner will: a durable pull consumer on the result subject of the work
 * queue stream (so JetStream de-duplication and persistence are part of what the tests see).
 */
export async function collectResults(
  nc: NatsConnection,
  names: ExecutorTopology,
): Promise<{ readonly results: ExecuteResultV1[]; readonly stop: () => void }> {
  const jsm = await jetstreamManager(nc);
  await ensureTopology(jsm, { streams: names.topology.streams, consumers: [] });
  await jsm.consumers.add(names.stream, {
    durable_name: names.resultDurable,
    filter_subject: names.resultSubject,
    ack_policy: AckPolicy.Explicit,
  });
  const consumer = await jetstream(nc).consumers.get(names.stream, names.resultDurable);
  const messages = await consumer.consume();
  const results: ExecuteResultV1[] = [];
  void (async () => {
    for await (const m of messages) {
      const decoded = decodePayload({ ...executeResultContract, subject: names.resultSubject }, m.data);
      if (decoded.ok) results.push(decoded.value);
      m.ack();
    }
  })();
  return { results, stop: () => void messages.stop() };
}
