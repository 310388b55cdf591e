// The access-scheduler wired for real: a private nats-server (production streams and subjects), the API
// emulator with the CRDs, the real k8s-gateway, Redis under a test prefix, and kubectl for a person's
// decisions. The executor's side of the scoped contract is answered by the test (the end-to-end tests in
// e2e/ run the real executor): what is checked here is the scheduler's own lifecycle, timers and writes.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  auditRecordsIn,
  JetStreamPublisher,
  SUBJECTS,
  scopedExecuteResultContract,
  type ScopedExecuteRequestV1,
  type ScopedExecuteResultV1,
} from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION, type Kind } from '@rolepolicy/kube';
import { logicalFingerprint } from '@rolepolicy/policy';
import {
  eventually,
  startPrivateRedis,
  startServiceCluster,
  type PrivateRedis,
  type ServiceCluster,
} from '@rolepolicy/testing';
import { Redis } from 'ioredis';
import { k8sGatewayService } from '../../../k8s-gateway/src/service.js';
import { accessSchedulerService } from '../service.js';

const NS = 'sched-int';
const TIMEOUT_MS = 60_000;
const REBUILD_MS = 1_000;

/** The gateway and the scheduler; their logs must never show the Secret's value. */
let cluster: ServiceCluster | undefined;
let redis: PrivateRedis;
const PREFIX = 'rp-sched-int';
let custom: CustomObjectsApi;
let client: NatsConnection;
let core: CoreV1Api;
let schedulerUrl: string;
let kubectlCache: string;

type Obj = { metadata: Record<string, any>; spec?: any; status?: any };

const coords = (kind: Kind) => ({
  group: GROUP,
  version: VERSION,
  plural: KIND_NAMES[kind].plural,
  namespace: NS,
});

async function create(kind: Kind, name: string, spec: Record<string, unknown>): Promise<Obj> {
  return (await custom.createNamespacedCustomObject({
    ...coords(kind),
    body: { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, spec },
  })) as Obj;
}

async function read(kind: Kind, name: string): Promise<Obj | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...coords(kind), name })) as Obj;
  } catch {
    return undefined;
  }
}

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      '/usr/bin/kubectl',
      [...args, '--cache-dir', kubectlCache, '-n', NS],
      { env: { ...process.env, KUBECONFIG: cluster!.emulator.kubeconfigPath } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const cond = (obj: Obj | undefined, type: string) =>
  (obj?.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

async function phaseOf(name: string, phase: string, timeoutMs = 20_000): Promise<Obj> {
  return eventually(
    `request ${name} in phase ${phase}`,
    async () => {
      const r = await read('EphemeralAccessRequest', name);
      return r?.status?.phase === phase ? r : undefined;
    },
    timeoutMs,
  );
}

/** The last scoped execution request the scheduler published for a plan (read from the stream). */
async function scopedRequestFor(planName: string): Promise<ScopedExecuteRequestV1> {
  const jsm = await jetstreamManager(client);
  return eventually(
    `a scoped request for ${planName}`,
    async () => {
      const info = await jsm.streams.info('RP_EXECUTE');
      for (let seq = info.state.last_seq; seq >= info.state.first_seq && seq > 0; seq--) {
        const m = await jsm.streams.getMessage('RP_EXECUTE', { seq }).catch(() => null);
        const scoped = [SUBJECTS.scopedExecuteRequest, SUBJECTS.scopedRevokeRequest] as string[];
        if (m === null || !scoped.includes(m.subject)) continue;
        const body = JSON.parse(new TextDecoder().decode(m.data)) as ScopedExecuteRequestV1;
        if (body.plan.name === planName) return body;
      }
      return undefined;
    },
    20_000,
  );
}

/** Answers a scoped request as the executor would (the contract's other side). */
async function answer(
  request: ScopedExecuteRequestV1,
  outcome: ScopedExecuteResultV1['outcome'],
  extra: Partial<ScopedExecuteResultV1> = {},
): Promise<void> {
  const publisher = new JetStreamPublisher(client);
  const result: ScopedExecuteResultV1 = {
    v: 1,
    plan: request.plan,
    request: request.request,
    policy: request.policy,
    operation: request.operation,
    bundleHash: request.bundleHash,
    idempotencyKey: request.idempotencyKey,
    outcome,
    statements:
      outcome === 'Applied'
        ? [
            `${request.operation === 'Activate' ? 'GRANT' : 'REVOKE'} "reader" ${request.operation === 'Activate' ? 'TO' : 'FROM'} "alice"`,
          ]
        : [],
    retained: [],
    reason:
      outcome === 'Applied'
        ? request.operation === 'Activate'
          ? 'MembershipsGranted'
          : 'MembershipsRevoked'
        : 'RoleMissing',
    message: outcome === 'Applied' ? 'done' : 'role reader does not exist',
    reportedAt: new Date().toISOString(),
    ...extra,
  };
  await publisher.publish(
    scopedExecuteResultContract,
    SUBJECTS.scopedExecuteResult,
    result,
    `${request.idempotencyKey}/${Date.now()}`,
  );
}

beforeAll(async () => {
  kubectlCache = await mkdtemp(join(tmpdir(), 'kubectl-cache-'));
  cluster = await startServiceCluster(NS, k8sGatewayService);
  redis = await startPrivateRedis();
  custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  client = await connect({ servers: cluster.nats.url });
  schedulerUrl = await cluster.services.start(accessSchedulerService, {
    REDIS_URL: redis.url,
    ACCESS_SCHEDULER_REDIS_PREFIX: PREFIX,
    ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS),
    EPHEMERAL_ACCESS_MAX_PENDING_TTL: '1h',
  });
  await core.createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: { name: 'db' },
      data: {
        DATABASE_URL: Buffer.from('postgres://owner:s3cret-value@DB.Example:6543/appdb').toString('base64'),
      },
    },
  });
  await create('PostgresPolicy', 'orders', {
    connection: { secretRef: { name: 'db' } },
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: 'reader', login: false },
      { name: 'alice', login: true },
      { name: 'platform', external: true },
    ],
  });
  // What the planner records after planning the policy: the lock identity scoped plans carry.
  await custom.patchNamespacedCustomObjectStatus(
    {
      ...coords('PostgresPolicy'),
      name: 'orders',
      body: { status: { managed_database_identity: `${NS}/db.example:6543/appdb` } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}, TIMEOUT_MS);

afterAll(async () => {
  await cluster?.services.stop();
  await client?.close();
  await redis?.stop();
  await cluster?.stop();
  await rm(kubectlCache, { recursive: true, force: true });
});

const accessPolicySpec = (extra: Record<string, unknown> = {}) => ({
  approval: { mode: 'Automatic' },
  justification: { required: false },
  maximumDuration: '2h',
  defaultDuration: '30m',
  memberships: [{ role: 'reader', inherit: true }],
  postgresPolicyRef: { name: 'orders' },
  ...extra,
});

const requestSpec = (policy: string, extra: Record<string, unknown> = {}) => ({
  accessPolicyRef: { name: policy },
  subject: { role: 'alice' },
  requestedBy: { username: 'alice@example.com' },
  ...extra,
});

test('an access policy is Accepted with resolvedRoles and gets its finalizer; a bad one names its reason', async () => {
  await create('EphemeralAccessPolicy', 'auto-read', accessPolicySpec());
  const accepted = await eventually('Accepted', async () => {
    const p = await read('EphemeralAccessPolicy', 'auto-read');
    return cond(p, 'Accepted')?.status === 'True' ? p : undefined;
  });
  expect(accepted.status.resolvedRoles).toEqual(['reader']);
  expect(accepted.status.observedGeneration).toBe(accepted.metadata['generation']);
  expect(cond(accepted, 'Suspended')).toMatchObject({ status: 'False', reason: 'Active' });
  expect(cond(accepted, 'RoleRetirementBlocked')).toMatchObject({ status: 'False' });
  await eventually('finalizer', async () =>
    ((await read('EphemeralAccessPolicy', 'auto-read'))?.metadata['finalizers'] ?? []).includes(
      'rolepolicy.io/ephemeral-access-policy',
    ),
  );

  await create(
    'EphemeralAccessPolicy',
    'external',
    accessPolicySpec({ memberships: [{ role: 'platform', inherit: true }] }),
  );
  const rejected = await eventually('Accepted=False', async () => {
    const p = await read('EphemeralAccessPolicy', 'external');
    return cond(p, 'Accepted')?.status === 'False' ? p : undefined;
  });
  expect(cond(rejected, 'Accepted')).toMatchObject({ reason: 'ExternalTargetRole' });
  expect(rejected.status.resolvedRoles).toEqual([]);
});

test(
  'Automatic: resolved with the target fingerprint, activated through a scoped plan, revoked at expiry, Ended',
  async () => {
    await create(
      'EphemeralAccessRequest',
      'alice-auto',
      requestSpec('auto-read', { requestedDuration: '4s' }),
    );
    const applying = await phaseOf('alice-auto', 'Applying');
    const resolved = applying.status.resolvedAccess;
    // Host case folded, credentials never part of it.
    expect(resolved.targetDatabaseFingerprint).toBe(logicalFingerprint('db.example', 6543, 'appdb'));
    expect(resolved.grantedDuration).toBe('4s');
    await eventually('the request finalizer', async () =>
      ((await read('EphemeralAccessRequest', 'alice-auto'))?.metadata['finalizers'] ?? []).includes(
        'rolepolicy.io/ephemeral-access',
      ),
    );

    const activatePlan = `alice-auto-${String(applying.metadata['uid']).replace(/-/g, '').slice(0, 8)}-activate-${resolved.bundleHash.slice(7, 19)}`;
    const plan = await eventually('the activation plan', async () => {
      const p = await read('PostgresPolicyPlan', activatePlan);
      return p?.status?.phase === undefined ? undefined : p;
    });
    expect(plan.spec.scope).toEqual({
      kind: 'MembershipBundle',
      operation: 'Activate',
      bundleHash: resolved.bundleHash,
    });
    expect(plan.spec.origin).toMatchObject({ kind: 'EphemeralAccessRequest', uid: applying.metadata['uid'] });
    expect(plan.spec.managedDatabaseIdentity).toBe(`${NS}/db.example:6543/appdb`);
    expect(plan.status.phase).toBe('Applying');
    expect(cond(plan, 'Scoped')).toMatchObject({ status: 'True', reason: 'Activate' });

    const sent = await scopedRequestFor(activatePlan);
    expect(sent).toMatchObject({
      operation: 'Activate',
      bundleHash: resolved.bundleHash,
      idempotencyKey: `${applying.metadata['uid']}/Activate/${resolved.bundleHash}`,
    });
    await answer(sent, 'Applied');
    const active = await phaseOf('alice-auto', 'Active');
    expect(cond(active, 'Applied')).toMatchObject({ status: 'True', reason: 'MembershipsGranted' });
    expect((await read('PostgresPolicyPlan', activatePlan))?.status.phase).toBe('Applied');

    // The expiry timer (or the rebuild) moves it to Revoking and asks for the revocation.
    const revoking = await phaseOf('alice-auto', 'Revoking', 20_000);
    expect(Date.parse(revoking.status.expiresAt)).toBeLessThanOrEqual(Date.now());
    const revokePlan = activatePlan.replace('-activate-', '-revoke-');
    const revoke = await scopedRequestFor(revokePlan);
    await answer(revoke, 'Applied');
    const ended = await phaseOf('alice-auto', 'Ended');
    expect(cond(ended, 'Ready')).toMatchObject({ status: 'True', reason: 'Ended' });
    expect(ended.status.endedAt).toBeDefined();

    const metrics = await (await fetch(`${schedulerUrl}/metrics`)).text();
    expect(metrics).toMatch(/rolepolicy_ephemeral_revocation_lag_seconds_count\S* 1/);
    expect(metrics).toContain('rolepolicy_ephemeral_queue_jobs{');
    // One audit record per transition, in the shared schema (docs/audit.md).
    const audit = auditRecordsIn(cluster!.services.logged.flatMap((l) => l.split('\n'))).filter(
      (r) => r.object.kind === 'EphemeralAccessRequest' && r.object.name === 'alice-auto',
    );
    expect(audit.map((r) => r.event)).toEqual([
      'access.approved',
      'access.activated',
      'access.expired',
      'access.ended',
    ]);
    expect(audit[0]).toMatchObject({
      source: 'access-scheduler',
      bundleHash: resolved.bundleHash,
      requestedBy: { username: 'alice@example.com' },
      subject: 'alice',
      toPhase: 'Applying',
      object: { uid: applying.metadata['uid'] },
    });
    // The same transitions as Kubernetes Events on the request.
    const events = await eventually('the lifecycle Events', async () => {
      const list = await core.listNamespacedEvent({ namespace: NS });
      const mine = list.items.filter((e) => e.involvedObject.name === 'alice-auto');
      return mine.some((e) => e.reason === 'MembershipsRevoked') ? mine : undefined;
    });
    expect(events.map((e) => e.reason)).toEqual(
      expect.arrayContaining(['MembershipsGranted', 'AccessExpired']),
    );
    expect(events.every((e) => e.source?.component === 'rolepolicy-access-scheduler')).toBe(true);
    expect(cluster!.services.logged.join('\n')).not.toContain('s3cret-value');
  },
  TIMEOUT_MS,
);

test(
  'Required: a kubectl json-patch approval with the bound hash and duration activates; a wrong hash is refused',
  async () => {
    await create(
      'EphemeralAccessPolicy',
      'approved-read',
      accessPolicySpec({ approval: { mode: 'Required' } }),
    );
    await eventually(
      'Accepted',
      async () => cond(await read('EphemeralAccessPolicy', 'approved-read'), 'Accepted')?.status === 'True',
    );

    await create(
      'EphemeralAccessRequest',
      'alice-wrong',
      requestSpec('approved-read', { requestedDuration: '1h' }),
    );
    const wrong = await phaseOf('alice-wrong', 'PendingApproval');
    const badPatch = JSON.stringify([
      {
        op: 'add',
        path: '/status/conditions/-',
        value: {
          type: 'Approved',
          status: 'True',
          reason: 'Approved',
          bundleHash: `sha256:${'0'.repeat(64)}`,
          grantedDuration: wrong.status.resolvedAccess.grantedDuration,
        },
      },
      { op: 'add', path: '/status/decidedBy', value: { username: 'bob@example.com' } },
    ]);
    const bad = await kubectl(
      'patch',
      'ephemeralaccessrequest',
      'alice-wrong',
      '--subresource=status',
      '--type=json',
      '-p',
      badPatch,
    );
    expect(bad.stderr).toBe('');
    const refused = await eventually('the refusal', async () => {
      const r = await read('EphemeralAccessRequest', 'alice-wrong');
      return r?.status?.lastError?.includes('approval refused') ? r : undefined;
    });
    expect(refused.status.phase).toBe('PendingApproval');
    expect(cond(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidRequestState' });

    await create(
      'EphemeralAccessRequest',
      'alice-approved',
      requestSpec('approved-read', { requestedDuration: '1h' }),
    );
    const pending = await phaseOf('alice-approved', 'PendingApproval');
    const { bundleHash, grantedDuration } = pending.status.resolvedAccess;
    const patch = JSON.stringify([
      {
        op: 'add',
        path: '/status/conditions/-',
        value: {
          type: 'Approved',
          status: 'True',
          reason: 'Approved',
          message: 'ticket OPS-1',
          bundleHash,
          grantedDuration,
        },
      },
      { op: 'add', path: '/status/decidedBy', value: { username: 'bob@example.com' } },
    ]);
    const ok = await kubectl(
      'patch',
      'ephemeralaccessrequest',
      'alice-approved',
      '--subresource=status',
      '--type=json',
      '-p',
      patch,
    );
    expect(ok.code).toBe(0);
    const applying = await phaseOf('alice-approved', 'Applying');
    expect(cond(applying, 'Approved')).toMatchObject({
      bundleHash,
      grantedDuration,
      message: 'ticket OPS-1',
    });
    expect(applying.status.decidedBy).toEqual({ username: 'bob@example.com', groups: [] });
    expect(Date.parse(applying.status.expiresAt) - Date.parse(applying.status.activatedAt)).toBe(3600_000);

    // Denied after Applying (no activation reported yet): the running activation is awaited, then revoked.
    const uid = String(applying.metadata['uid']);
    const activatePlan = `alice-approved-${uid.replace(/-/g, '').slice(0, 8)}-activate-${bundleHash.slice(7, 19)}`;
    const sent = await scopedRequestFor(activatePlan);
    await answer(sent, 'Applied');
    await phaseOf('alice-approved', 'Active');
    const denyResult = await kubectl(
      'patch',
      'ephemeralaccessrequest',
      'alice-approved',
      '--subresource=status',
      '--type=json',
      '-p',
      JSON.stringify([
        {
          op: 'add',
          path: '/status/conditions/-',
          value: { type: 'Denied', status: 'True', reason: 'Denied' },
        },
      ]),
    );
    // A second decision is refused by admission: decisions are terminal and mutually exclusive.
    expect(denyResult.code).not.toBe(0);
    expect(denyResult.stderr).toContain('Approved=True and Denied=True are mutually exclusive');
  },
  TIMEOUT_MS,
);

test(
  'ApprovalExpired after pendingRequestTTL, even when Redis is flushed before the deadline',
  async () => {
    await create(
      'EphemeralAccessPolicy',
      'short-ttl',
      accessPolicySpec({ approval: { mode: 'Required' }, pendingRequestTTL: '3s' }),
    );
    await eventually(
      'Accepted',
      async () => cond(await read('EphemeralAccessPolicy', 'short-ttl'), 'Accepted')?.status === 'True',
    );
    await create('EphemeralAccessRequest', 'alice-late', requestSpec('short-ttl'));
    const pending = await phaseOf('alice-late', 'PendingApproval');
    const admin = new Redis(redis.url);
    try {
      await eventually(
        'the approval timer in Redis',
        async () => (await admin.keys(`${PREFIX}:ephemeral-approval-expiry:*`)).length > 0,
      );
      await redis.flushAll();
    } finally {
      admin.disconnect();
    }
    const expired = await phaseOf('alice-late', 'ApprovalExpired', 15_000);
    // Worst case: the deadline, plus one rebuild interval, plus the time to write and observe status.
    const lag =
      Date.parse(
        expired.status.conditions.find((c: { type: string }) => c.type === 'Ready').lastTransitionTime,
      ) - Date.parse(pending.status.approvalExpiresAt);
    expect(lag).toBeLessThanOrEqual(REBUILD_MS + 2_000);
  },
  TIMEOUT_MS,
);

test('deleting a pending request releases its finalizer; the dashboard is served read-only', async () => {
  await create('EphemeralAccessRequest', 'alice-gone', requestSpec('short-ttl'));
  await phaseOf('alice-gone', 'PendingApproval');
  await eventually('finalizer', async () =>
    ((await read('EphemeralAccessRequest', 'alice-gone'))?.metadata['finalizers'] ?? []).includes(
      'rolepolicy.io/ephemeral-access',
    ),
  );
  await custom.deleteNamespacedCustomObject({ ...coords('EphemeralAccessRequest'), name: 'alice-gone' });
  await eventually(
    'the request gone',
    async () => (await read('EphemeralAccessRequest', 'alice-gone')) === undefined,
  );

  const page = await fetch(`${schedulerUrl}/queues`);
  expect(page.status).toBe(200);
  const queues = (await (await fetch(`${schedulerUrl}/queues/api/queues`)).json()) as {
    queues: { name: string; readOnlyMode: boolean }[];
  };
  expect(queues.queues.map((q) => q.name).sort()).toEqual([
    'ephemeral-access-expiry',
    'ephemeral-approval-expiry',
    'rolepolicy-notifications',
  ]);
  expect(queues.queues.every((q) => q.readOnlyMode)).toBe(true);
});

test('deleting an access policy deletes its requests first, then lets go of its own finalizer', async () => {
  await create('EphemeralAccessPolicy', 'doomed', accessPolicySpec({ approval: { mode: 'Required' } }));
  await eventually('finalizer', async () =>
    ((await read('EphemeralAccessPolicy', 'doomed'))?.metadata['finalizers'] ?? []).includes(
      'rolepolicy.io/ephemeral-access-policy',
    ),
  );
  await create('EphemeralAccessRequest', 'alice-doomed', requestSpec('doomed'));
  await phaseOf('alice-doomed', 'PendingApproval');
  await custom.deleteNamespacedCustomObject({ ...coords('EphemeralAccessPolicy'), name: 'doomed' });
  await eventually(
    'the request gone',
    async () => (await read('EphemeralAccessRequest', 'alice-doomed')) === undefined,
  );
  await eventually(
    'the access policy gone',
    async () => (await read('EphemeralAccessPolicy', 'doomed')) === undefined,
  );
});

test('admission: request spec is immutable, resolvedAccess is write-once, condition types are declared', async () => {
  const req = await phaseOf('alice-auto', 'Ended');
  const spec = await kubectl(
    'patch',
    'ephemeralaccessrequest',
    'alice-auto',
    '--type=merge',
    '-p',
    '{"spec":{"requestedDuration":"2h"}}',
  );
  expect(spec.stderr).toContain('request spec is immutable');
  const snapshot = await kubectl(
    'patch',
    'ephemeralaccessrequest',
    'alice-auto',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { resolvedAccess: { ...req.status.resolvedAccess, grantedDuration: '99s' } } }),
  );
  expect(snapshot.stderr).toContain('resolvedAccess is write-once');
  const type = await kubectl(
    'patch',
    'ephemeralaccessrequest',
    'alice-auto',
    '--subresource=status',
    '--type=json',
    '-p',
    JSON.stringify([
      { op: 'add', path: '/status/conditions/-', value: { type: 'Cancelled', status: 'True' } },
    ]),
  );
  expect(type.stderr).toContain('request conditions must use a declared lifecycle or decision type');
});
