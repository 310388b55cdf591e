// End to end, notifications (issue 26): a local receiver behind a namespace's CloudEvents sink and the cluster's
// Slack sink gets every occurrence (plans pending, decided, applied, failed; access pending, decided, active,
// ended, revoked, failed, approval expired) exactly once, also after answering 500 twice and while it is down;
// every CloudEvent verifies under either rotating key, a 4xx answer dead-letters, and no secret value is sent.
import { spawn } from 'node:child_process';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { generatedSecretName } from '@rolepolicy/kube';
import { NOTIFICATION_TYPES, verifySignature } from '@rolepolicy/policy';
import { localRedisUrl } from '@rolepolicy/testing';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources } from './support/ephemeral.js';
import { findNeedles, redisContents, streamContents, wireTap, type StoredItem } from './support/at-rest.js';
import { metricSums } from './support/metrics.js';
import { WebhookReceiver, type Received } from './support/receiver.js';

const OPS = 'rp-ops';
const KEYS = { current: 'current-signing-key-0123456789', next: 'next-signing-key-9876543210' };

let stack: Stack;
let db: TargetDatabase;
let failing: TargetDatabase;
let eph: EphemeralResources;
let receiver: WebhookReceiver;
let scheduler: string;
/** Every core NATS message of the file (Secret reads are sealed: no value may cross in clear). */
let tap: NatsConnection;
let wire: StoredItem[];
let roles: Record<'reader' | 'writer' | 'alice' | 'ops' | 'svc', string>;

type CloudEvent = {
  specversion: string;
  id: string;
  type: string;
  subject: string;
  time: string;
  data: Record<string, unknown>;
};

async function secret(namespace: string, name: string, data: Record<string, string>): Promise<void> {
  await stack.core.createNamespacedSecret({
    namespace,
    body: { metadata: { name, namespace }, stringData: data },
  });
}

async function configMap(namespace: string, data: Record<string, string>): Promise<void> {
  await stack.core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'rolepolicy-notifications', namespace }, data },
  });
}

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.up();
  stack = await startStack({
    env: {
      ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: '2000',
      NOTIFICATIONS_NAMESPACE: OPS,
      // The minute a receiver may be down is shortened for the test; the default schedule is unit-tested.
      NOTIFICATIONS_RETRY_BACKOFF_MS: '250',
      NOTIFICATIONS_RETRY_ATTEMPTS: '10',
    },
  });
  scheduler = stack.services.find((s) => s.name === 'access-scheduler')!.url;
  tap = await connect({ servers: stack.nats.url });
  wire = wireTap(tap);
  [db, failing] = [await stack.createDatabase('notify'), await stack.createDatabase('notify-fail')];
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  roles = {
    reader: stack.role('reader'),
    writer: stack.role('writer'),
    alice: stack.role('alice'),
    ops: stack.role('ops'),
    svc: stack.role('svc'),
  };
  await secret(stack.namespace, 'hooks', {
    url: receiver.url('/ce'),
    current: KEYS.current,
    next: KEYS.next,
  });
  await configMap(stack.namespace, {
    urlSecretName: 'hooks',
    signingSecretName: 'hooks',
    signingKeys: 'next,current',
  });
  await secret(OPS, 'slack-hook', { url: receiver.url('/slack') });
  await configMap(OPS, { format: 'slack', urlSecretName: 'slack-hook', types: 'plan.pending-approval' });
  await configMap('broken', { format: 'teams', urlSecretName: 'hooks' });

  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: roles.reader, login: false },
      { name: roles.writer, login: false },
      { name: roles.alice, login: true },
      { name: roles.ops, login: false },
      { name: roles.svc, login: true, password: { generate: {} } },
    ],
  });
  await stack.reconciled('orders');
  // Out of band: ops may run programs on the server, so activating it must fail (ADR 0021).
  await db.sql(`GRANT pg_execute_server_program TO "${roles.ops}"`);
  const accessPolicy = (name: string, role: string, extra: Record<string, unknown>) =>
    eph.create('EphemeralAccessPolicy', name, {
      approval: { mode: 'Automatic' },
      justification: { required: false },
      maximumDuration: '1h',
      defaultDuration: '1h',
      postgresPolicyRef: { name: 'orders' },
      memberships: [{ role, inherit: true }],
      ...extra,
    });
  await accessPolicy('auto', roles.reader, {});
  await accessPolicy('approval', roles.writer, { approval: { mode: 'Required' }, defaultDuration: '6s' });
  await accessPolicy('short-ttl', roles.writer, { approval: { mode: 'Required' }, pendingRequestTTL: '3s' });
  await accessPolicy('privileged', roles.ops, {});
}, 90_000);

afterAll(async () => {
  await tap?.drain();
  await stack?.stop();
  await receiver?.down();
}, 180_000);

function request(policy: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    accessPolicyRef: { name: policy },
    subject: { role: roles.alice },
    requestedBy: { username: 'alice@example.com' },
    ...extra,
  };
}

/** Runs a notification's kubectl command through a shell, as someone pasting it would, as `who`. */
function runKubectl(command: string, who: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command.replace('<you>', who)], {
      env: { ...process.env, KUBECONFIG: stack.emulator.kubeconfigPath },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`kubectl failed: ${stderr}`))));
  });
}

const events = (received: readonly Received[]): CloudEvent[] =>
  received.map((r) => JSON.parse(r.body) as CloudEvent);

/** Waits for the accepted CloudEvent of `type` about `subject` (`<plural>/<name>`). */
function notified(type: string, subject: string, timeoutMs = 30_000): Promise<CloudEvent> {
  return waitFor(
    `${type} about ${subject}`,
    async () =>
      events(receiver.accepted('/ce')).find(
        (e) => e.type === `io.rolepolicy.${type}` && e.subject === subject,
      ),
    {
      timeoutMs,
      describe: async () => events(receiver.received.filter((r) => r.path === '/ce')).map((e) => e.type),
    },
  );
}

test('a manual plan: pending approval (counts, review ConfigMap, approve commands), decided by whom, applied', async () => {
  await stack.resources.createPolicy('manual', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('manual_a'), login: false }],
  });
  const plan = await waitFor('a Pending plan', async () =>
    (await stack.resources.plans('manual')).find((p) => p.status?.phase === 'Pending'),
  );
  const name = plan.metadata.name!;
  const pending = await notified('plan.pending-approval', `postgrespolicyplans/${name}`);
  expect(pending.data).toMatchObject({
    policy: 'manual',
    plan: name,
    namespace: stack.namespace,
    changeSummary: { total: 1, roles_created: 1 },
    approve: { plugin: `kubectl rolepolicy approve ${name} -n ${stack.namespace}` },
  });
  expect(pending.data['reviewConfigMap']).toBe(
    plan.metadata.annotations?.['rolepolicy.io/review-configmap'] ?? null,
  );
  expect((pending.data['approve'] as { kubectl: string }).kubectl).toContain(
    `kubectl -n ${stack.namespace} patch postgrespolicyplan ${name} --subresource=status --type=json`,
  );
  // The cluster-wide Slack sink wants only plans pending approval.
  const slack = await waitFor('the Slack message', async () =>
    receiver.accepted('/slack').find((r) => r.body.includes(name)),
  );
  const message = JSON.parse(slack.body) as { text: string; blocks: unknown[] };
  expect(message.text).toContain(`Plan ${stack.namespace}/${name} of policy manual waits for approval`);
  expect(message.blocks.length).toBeGreaterThan(0);

  // The exact command the notification carries approves the plan (kubectl against the API emulator).
  await runKubectl((pending.data['approve'] as { kubectl: string }).kubectl, 'bob@example.com');
  const decided = await notified('plan.decision-recorded', `postgrespolicyplans/${name}`);
  expect(decided.data).toMatchObject({ decision: 'Approved', decidedBy: { username: 'bob@example.com' } });
  await notified('plan.applied', `postgrespolicyplans/${name}`);
}, 60_000);

test('a plan whose SQL fails: plan.failed with the error', async () => {
  const role = stack.role('failing_r');
  await failing.sql('CREATE SCHEMA sales');
  await stack.resources.createPolicy('failing', {
    connection: failing.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: role, login: false }],
    grants: [{ role, object: { type: 'schema', name: 'sales' }, privileges: ['USAGE'] }],
  });
  const plan = await waitFor('a Pending plan', async () =>
    (await stack.resources.plans('failing')).find((p) => p.status?.phase === 'Pending'),
  );
  await failing.sql(`CREATE FUNCTION refuse() RETURNS event_trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'grants are refused in this database'; END $$`);
  await failing.sql(`CREATE EVENT TRIGGER refuse_grants ON ddl_command_start WHEN TAG IN ('GRANT')
    EXECUTE FUNCTION refuse()`);
  await stack.resources.approve(plan.metadata.name!);
  const failed = await notified('plan.failed', `postgrespolicyplans/${plan.metadata.name}`, 45_000);
  expect(String(failed.data['lastError'])).toContain('grants are refused in this database');
}, 75_000);

test('access with approval: pending (requester, justification, bundle, duration, deadline), decided, active, ended', async () => {
  await eph.create('EphemeralAccessRequest', 'w-1', request('approval', { justification: 'incident 42' }));
  const pending = await notified('access.pending-approval', 'ephemeralaccessrequests/w-1');
  const waiting = await eph.phase('w-1', 'PendingApproval');
  const resolved = waiting.status!.resolvedAccess!;
  expect(pending.data).toMatchObject({
    requestedBy: { username: 'alice@example.com' },
    justification: 'incident 42',
    accessPolicy: 'approval',
    bundle: { bundleHash: resolved.bundleHash, memberships: [{ role: roles.writer, inherit: true }] },
    duration: resolved.grantedDuration,
    approvalExpiresAt: waiting.status!.approvalExpiresAt,
  });
  await runKubectl((pending.data['approve'] as { kubectl: string }).kubectl, 'security@example.com');
  const decided = await notified('access.decision-recorded', 'ephemeralaccessrequests/w-1');
  expect(decided.data).toMatchObject({
    decision: 'Approved',
    decidedBy: { username: 'security@example.com' },
  });
  await notified('access.active', 'ephemeralaccessrequests/w-1');
  await notified('access.ended', 'ephemeralaccessrequests/w-1', 40_000);
}, 90_000);

test('access revoked by deleting the request, failed on a privileged role, expired unapproved', async () => {
  await eph.create('EphemeralAccessRequest', 'r-1', request('auto'));
  await notified('access.active', 'ephemeralaccessrequests/r-1');
  await eph.delete('EphemeralAccessRequest', 'r-1');
  await notified('access.revoked', 'ephemeralaccessrequests/r-1');

  await eph.create('EphemeralAccessRequest', 'ops-1', request('privileged'));
  const failed = await notified('access.failed', 'ephemeralaccessrequests/ops-1', 45_000);
  expect(String(failed.data['lastError'])).toContain('pg_execute_server_program');

  await eph.create('EphemeralAccessRequest', 'late-1', request('short-ttl'));
  await notified('access.approval-expired', 'ephemeralaccessrequests/late-1');
}, 120_000);

test('a receiver answering 500 twice first gets the notification once', async () => {
  receiver.failNext(2);
  await eph.create('EphemeralAccessRequest', 'r-2', request('auto'));
  const active = await notified('access.active', 'ephemeralaccessrequests/r-2');
  const tries = receiver.received.filter((r) => r.path === '/ce' && r.body.includes(active.id));
  expect(tries.map((r) => r.status)).toEqual([500, 500, 200]);
}, 60_000);

test('a receiver down (connections refused) and then up again gets the notification once', async () => {
  await receiver.down();
  const failedBefore =
    (await metricSums(scheduler, 'rolepolicy_notification_attempts_failed_total'))['total'] ?? 0;
  await eph.create('EphemeralAccessRequest', 'r-3', request('auto'));
  await eph.phase('r-3', 'Active');
  await waitFor('three attempts refused while the receiver is down', async () => {
    const failed =
      (await metricSums(scheduler, 'rolepolicy_notification_attempts_failed_total'))['total'] ?? 0;
    return failed - failedBefore >= 3;
  });
  await receiver.up();
  await notified('access.active', 'ephemeralaccessrequests/r-3', 60_000);
}, 120_000);

test('a restarted access-scheduler derives the same ids: nothing is sent twice', async () => {
  await stack.stopServices(['access-scheduler']);
  await stack.startServices(['access-scheduler']);
  scheduler = stack.services.find((s) => s.name === 'access-scheduler')!.url;
  // Its first rebuild re-derives every occurrence above before it sees this new one.
  await eph.create('EphemeralAccessRequest', 'r-5', request('auto'));
  await notified('access.active', 'ephemeralaccessrequests/r-5');
  const ids = events(receiver.accepted('/ce')).map((e) => e.id);
  expect(ids.length).toBe(new Set(ids).size);
}, 60_000);

test('a sink refusing with 4xx: the delivery is dead-lettered, counted and kept in the failed state', async () => {
  await eph.create('EphemeralAccessRequest', 'r-4', request('auto'));
  await notified('access.active', 'ephemeralaccessrequests/r-4');
  // Refused from the first attempt on: the sink's path is gone.
  receiver.refuse('/ce');
  await eph.delete('EphemeralAccessRequest', 'r-4');
  await waitFor('a dead-lettered notification', async () => {
    const dead = await metricSums(scheduler, 'rolepolicy_notifications_dead_lettered_total', 'type');
    return (dead['access.revoked'] ?? 0) >= 1;
  });
  const queues = (await (await fetch(`${scheduler}/queues/api/queues`)).json()) as {
    queues: { name: string; counts: Record<string, number> }[];
  };
  expect(
    queues.queues.find((q) => q.name === 'rolepolicy-notifications')?.counts['failed'],
  ).toBeGreaterThanOrEqual(1);
}, 60_000);

test('every kind once per occurrence, every CloudEvent signed under both keys, no secret value anywhere', async () => {
  const accepted = events(receiver.accepted('/ce'));
  const perId = new Map<string, number>();
  for (const e of accepted) perId.set(e.id, (perId.get(e.id) ?? 0) + 1);
  expect([...perId.values()].filter((n) => n > 1)).toEqual([]);
  expect(new Set(accepted.map((e) => e.type.replace('io.rolepolicy.', '')))).toEqual(
    new Set(NOTIFICATION_TYPES),
  );
  for (const r of receiver.received.filter((x) => x.path === '/ce')) {
    expect(r.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
    const signature = String(r.headers['x-rolepolicy-signature']);
    expect(verifySignature(r.body, signature, Buffer.from(KEYS.current))).toBe(true);
    expect(verifySignature(r.body, signature, Buffer.from(KEYS.next))).toBe(true);
  }
  // The scheduler reports the invalid ConfigMap in namespace broken (a Warning Event naming field and rule)
  // and counts it.
  expect((await metricSums(scheduler, 'rolepolicy_notification_sinks', 'state'))['invalid']).toBe(1);
  const event = await waitFor('the Event on the invalid ConfigMap', async () =>
    (await stack.core.listNamespacedEvent({ namespace: 'broken' })).items.find(
      (e) => e.involvedObject.name === 'rolepolicy-notifications',
    ),
  );
  expect(event).toMatchObject({ type: 'Warning', reason: 'InvalidNotificationSink' });
  expect(event.message).toBe(
    'no notification goes to this sink: data.format: must be one of cloudevents, slack',
  );

  const generated = await stack.core.readNamespacedSecret({
    namespace: stack.namespace,
    name: generatedSecretName('orders', roles.svc),
  });
  const password = Buffer.from(generated.data?.['password'] ?? '', 'base64').toString('utf8');
  const connection = new URL(db.url);
  const secrets = [KEYS.current, KEYS.next, receiver.url('/ce'), receiver.url('/slack'), password, db.url];
  if (connection.password) secrets.push(connection.password);
  expect(password).toHaveLength(32);
  const everything = receiver.received.map((r) => `${JSON.stringify(r.headers)}\n${r.body}`).join('\n');
  for (const value of secrets) {
    expect(everything).not.toContain(value);
    expect(everything).not.toContain(Buffer.from(value).toString('base64'));
  }
  // The sink's URL and keys were read at each attempt, never kept: not in a stream, in Redis or on the wire.
  await tap.flush();
  expect(wire.some((item) => item.where.startsWith('rp.k8s.secret.read'))).toBe(true);
  const stored = [...(await streamContents(tap)), ...(await redisContents(localRedisUrl())), ...wire];
  expect(stored.some((item) => item.text.includes('rolepolicy-notifications'))).toBe(true);
  expect(
    findNeedles(stored, {
      'current signing key': KEYS.current,
      'next signing key': KEYS.next,
      'CloudEvents sink URL': receiver.url('/ce'),
      'Slack sink URL': receiver.url('/slack'),
    }),
  ).toEqual([]);
}, 60_000);
