// Test support for scoped executions on the executor's production cluster wiring, without the other services:
// an executor replica serving the sandbox's scoped subjects (activations, and revocations on their own durable,
// ADR 0013), the objects the access-scheduler and the gateway would have left in the cluster (a target policy
// with its connection Secret, an access policy, requests with their resolvedAccess, activation plans), and
// the scoped results as the access-scheduler reads them.
import { Module, type INestApplication } from '@nestjs/common';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  deadLetterContract,
  decodePayload,
  encodePayload,
  executeRequestContract,
  executeResultContract,
  scopedExecuteRequestContract,
  scopedExecuteResultContract,
  scopedRevokeRequestContract,
  type ScopedExecuteRequestV1,
  type ScopedExecuteResultV1,
} from '@rolepolicy/contracts';
import {
  BUNDLE_ENCODING,
  bundleHash,
  canonicalBundle,
  scopedPlanName,
  type BundleMembership,
} from '@rolepolicy/policy';
import { startService } from '@rolepolicy/runtime';
import { freePort } from '@rolepolicy/testing';
import { executorService } from '../../service.js';
import { ExecutionModule } from '../../execution/execution.module.js';
import { publishObject, secretObject, type ClusterNames } from '../../execution/test-support/cluster.js';
import type { ExecutorTopology } from '../../execution/test-support/harness.js';

const API_VERSION = 'rolepolicy.io/v1alpha1';

/** The sandbox's scoped subjects, under the same root as the policy executions' ones. */
export interface ScopedSubjects {
  readonly request: string;
  readonly revoke: string;
  readonly result: string;
}

/** The scoped subjects under `topology`'s root. */
export function scopedSubjects(topology: ExecutorTopology): ScopedSubjects {
  const root = topology.requestSubject.replace(/\.execute\.request$/, '');
  return {
    request: `${root}.execute.scoped.request`,
    revoke: `${root}.execute.scoped.revoke`,
    result: `${root}.execute.scoped.result`,
  };
}

/**
 * Starts one executor replica with the production cluster wiring on sandbox names, consuming activations and
 * revocations on durables named as in production (so `EXECUTOR_REVOKE_CONCURRENCY` applies to the revoke one).
 */
export async function startScopedExecutor(
  topology: ExecutorTopology,
  names: ClusterNames,
  natsUrl: string,
  env: Readonly<Record<string, string>>,
): Promise<INestApplication> {
  const subjects = scopedSubjects(topology);
  const stream = topology.topology.streams[0]!.name;
  const durable = (name: string, filterSubject: string) => ({
    stream,
    durable: name,
    filterSubject,
    ackWaitMs: 30_000,
    maxDeliver: 10,
    maxAckPending: 64,
  });
  @Module({
    imports: [
      ExecutionModule.register({
        requestSubject: topology.requestSubject,
        resultSubject: topology.resultSubject,
        scopedRequestSubject: subjects.request,
        scopedRevokeSubject: subjects.revoke,
        scopedResultSubject: subjects.result,
        cluster: { subjectRoot: names.root, resourceStream: names.resources.name },
      }),
    ],
  })
  class ScopedExecutorModule {}
  return startService(
    { ...executorService, module: ScopedExecutorModule },
    {
      env: {
        NATS_URL: natsUrl,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        LOG_LEVEL: 'log',
        ...env,
      },
      topology: {
        streams: topology.topology.streams,
        consumers: [
          ...topology.topology.consumers,
          durable('executor-scoped', subjects.request),
          durable('executor-scoped-revoke', subjects.revoke),
        ],
      },
      contracts: [
        { ...executeRequestContract, subject: topology.requestSubject },
        { ...executeResultContract, subject: topology.resultSubject },
        { ...scopedExecuteRequestContract, subject: subjects.request },
        { ...scopedRevokeRequestContract, subject: subjects.revoke },
        { ...scopedExecuteResultContract, subject: subjects.result },
        deadLetterContract,
      ],
      deadLetterSubject: topology.deadLetterSubject,
      backoff: { initialMs: 50, maxMs: 200 },
    },
  );
}

/** The scoped results published so far, in arrival order (a durable on the result subject, acked). */
export async function collectScopedResults(
  nc: NatsConnection,
  topology: ExecutorTopology,
  durableName: string,
): Promise<{ readonly results: ScopedExecuteResultV1[]; readonly stop: () => void }> {
  const { result } = scopedSubjects(topology);
  const stream = topology.topology.streams[0]!.name;
  await (
    await jetstreamManager(nc)
  ).consumers.add(stream, {
    durable_name: durableName,
    filter_subject: result,
    ack_policy: AckPolicy.Explicit,
  });
  const messages = await (await jetstream(nc).consumers.get(stream, durableName)).consume();
  const results: ScopedExecuteResultV1[] = [];
  void (async () => {
    for await (const m of messages) {
      const decoded = decodePayload({ ...scopedExecuteResultContract, subject: result }, m.data);
      if (decoded.ok) results.push(decoded.value);
      m.ack();
    }
  })();
  return { results, stop: () => void messages.stop() };
}

/** A target policy as the cluster holds it: `roles` managed, connecting through Secret `<name>-conn`. */
export interface TargetPolicy {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** `logicalFingerprint` of the database the Secret's URL names. */
  readonly fingerprint: string;
}

/**
 * Publishes the target policy `name` (apply mode, managing `roles`) and its connection Secret holding `url`,
 * and an access policy `<name>-access` on it listing `bundleRoles`.
 */
export async function publishTarget(
  nc: NatsConnection,
  names: ClusterNames,
  target: TargetPolicy,
  url: string,
  roles: readonly string[],
  bundleRoles: readonly string[],
): Promise<void> {
  const { namespace, name, uid } = target;
  await publishObject(nc, names, 'secret', secretObject(namespace, `${name}-conn`, { DATABASE_URL: url }));
  await publishObject(nc, names, 'postgrespolicy', {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    metadata: { name, namespace, uid, generation: 1 },
    spec: {
      connection: { secretRef: { name: `${name}-conn` } },
      mode: 'apply',
      reconciliation_mode: 'authoritative',
      roles: roles.map((role) => ({ name: role, login: false })),
    },
  });
  await publishObject(nc, names, 'ephemeralaccesspolicy', {
    apiVersion: API_VERSION,
    kind: 'EphemeralAccessPolicy',
    metadata: { name: `${name}-access`, namespace, uid: `${uid}-access`, generation: 1 },
    spec: {
      approval: { mode: 'Automatic' },
      justification: { required: false },
      maximumDuration: '1h',
      memberships: bundleRoles.map((role) => ({ role, inherit: true })),
      postgresPolicyRef: { name },
    },
  });
}

/** A request holding (or about to hold) `role` for `subject` on a target policy. */
export interface HeldRequest {
  readonly target: TargetPolicy;
  readonly name: string;
  readonly uid: string;
  readonly hash: string;
}

/**
 * Publishes request `name` granting `role` to `subject` on `target` in `phase` (`Applying`: being activated;
 * `Revoking`: being revoked) with its resolvedAccess, and its activation plan (`Applying` or `Applied`), as the
 * access-scheduler leaves them before it sends the execution request.
 */
export async function publishRequest(
  nc: NatsConnection,
  names: ClusterNames,
  target: TargetPolicy,
  request: { readonly name: string; readonly subject: string; readonly role: string },
  phase: 'Applying' | 'Revoking',
): Promise<HeldRequest> {
  const uid = `${target.uid}-${request.name}`;
  const memberships: BundleMembership[] = canonicalBundle([
    { role: request.role, member: request.subject, inherit: true },
  ]);
  const hash = bundleHash({ targetDatabaseFingerprint: target.fingerprint, memberships });
  const { namespace } = target;
  await publishObject(nc, names, 'ephemeralaccessrequest', {
    apiVersion: API_VERSION,
    kind: 'EphemeralAccessRequest',
    metadata: { name: request.name, namespace, uid },
    spec: {
      accessPolicyRef: { name: `${target.name}-access` },
      subject: { role: request.subject },
      requestedBy: { username: 'alice@example.com' },
    },
    status: {
      phase,
      resolvedAccess: {
        accessPolicyGeneration: 1,
        accessPolicyUid: `${target.uid}-access`,
        bundleEncoding: BUNDLE_ENCODING,
        bundleHash: hash,
        grantedDuration: '600s',
        memberships,
        targetDatabaseFingerprint: target.fingerprint,
        targetPolicyGeneration: 1,
        targetPolicyUid: target.uid,
      },
    },
  });
  const held: HeldRequest = { target, name: request.name, uid, hash };
  const plan = scopedPlanName({ name: request.name, uid }, 'Activate', hash);
  await publishObject(nc, names, 'postgrespolicyplan', {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicyPlan',
    metadata: {
      name: plan,
      namespace,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'EphemeralAccessRequest',
          name: request.name,
          uid,
          controller: true,
        },
      ],
    },
    spec: {
      managedDatabaseIdentity: target.fingerprint,
      policyGeneration: 1,
      policyRef: { name: target.name },
      reconciliationMode: 'authoritative',
      ownedRoles: [request.role, request.subject].sort(),
      ownedSchemas: [],
      origin: { kind: 'EphemeralAccessRequest', name: request.name, uid },
      scope: { kind: 'MembershipBundle', operation: 'Activate', bundleHash: hash },
    },
    status: { phase: phase === 'Applying' ? 'Applying' : 'Applied' },
  });
  return held;
}

/** The execution request of `operation` for `held`, as the access-scheduler sends it. */
export function scopedMessage(held: HeldRequest, operation: 'Activate' | 'Revoke'): ScopedExecuteRequestV1 {
  const ref = (kind: string, name: string, uid: string) => ({
    apiVersion: API_VERSION,
    kind,
    namespace: held.target.namespace,
    name,
    uid,
  });
  return {
    v: 1,
    plan: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      namespace: held.target.namespace,
      name: scopedPlanName({ name: held.name, uid: held.uid }, operation, held.hash),
    },
    request: ref('EphemeralAccessRequest', held.name, held.uid),
    policy: ref('PostgresPolicy', held.target.name, held.target.uid),
    operation,
    bundleHash: held.hash,
    idempotencyKey: `${held.uid}/${operation}/${held.hash}`,
  };
}

/** Sends `message` on its subject (revocations on their own, ADR 0013). */
export async function sendScoped(
  nc: NatsConnection,
  topology: ExecutorTopology,
  message: ScopedExecuteRequestV1,
): Promise<void> {
  const subjects = scopedSubjects(topology);
  const revoke = message.operation !== 'Activate';
  const subject = revoke ? subjects.revoke : subjects.request;
  const contract = revoke ? scopedRevokeRequestContract : scopedExecuteRequestContract;
  await jetstream(nc).publish(subject, encodePayload({ ...contract, subject }, message), {
    msgID: message.idempotencyKey,
  });
}
