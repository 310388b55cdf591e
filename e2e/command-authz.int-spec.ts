// Attacks by a compromised service on the k8s-gateway's command path (ADR 0022): signed in to the secured
// NATS as that service's own user, it sends well-formed commands outside its role. The gateway refuses them
// (counted, logged, nothing written), NATS refuses commands on another service's subject, and no service but
// the gateway may create or change a stream or a durable consumer.
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  STREAMS,
  encodePayload,
  k8sCommandContract,
  k8sCommandSubject,
  type K8sCommandV1,
} from '@rolepolicy/contracts';
import type { NatsServiceUser } from '@rolepolicy/testing';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { metricSums } from './support/metrics.js';

const NS = 'cmd-authz';
const SENDERS = ['planner', 'executor', 'access-scheduler'] as const;
type Sender = (typeof SENDERS)[number];

let stack: Stack;
let db: TargetDatabase;
let planName: string;
const conns = new Map<NatsServiceUser, NatsConnection>();
let sequence = 0;

const PLAN = 'rolepolicy.io/v1alpha1';

beforeAll(async () => {
  stack = await startStack({ natsAccessControl: true, namespace: NS });
  await stack.waitReady();
  db = await stack.createDatabase('authz');
  await stack.resources.createPolicy('guarded', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('authz_app'), login: false }],
  });
  planName = (
    await waitFor('a Pending plan', async () =>
      (await stack.resources.plans('guarded')).find((p) => p.status?.phase === 'Pending'),
    )
  ).metadata.name!;
  await stack.core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: { metadata: { name: 'cluster-settings', namespace: 'kube-system' }, data: { dns: '10.0.0.10' } },
  });
  await stack.core.createNamespacedConfigMap({
    namespace: NS,
    body: { metadata: { name: 'team-settings-sql', namespace: NS }, data: { owner: 'team' } },
  });
  // Only the gateway keeps running: every command it handles from now on is one of the test's.
  await stack.stopServices(['planner', 'executor', 'access-scheduler', 'inspector']);
  for (const user of [...SENDERS, 'inspector'] as const)
    conns.set(user, await stack.natsAccess!.connect(user));
}, 120_000);

// On the secured NATS a service's close has been seen to take over a minute (cause open, docs/next-steps).
afterAll(async () => {
  for (const nc of conns.values()) await nc.close().catch(() => undefined);
  await stack?.stop();
}, 180_000);

const gatewayUrl = () => stack.services.find((s) => s.name === 'k8s-gateway')!.url;
const handled = async () =>
  (await metricSums(gatewayUrl(), 'rp_messages_handled_total', 'consumer'))['k8s-gateway-commands'] ?? 0;
const refused = async (sender: string) =>
  (await metricSums(gatewayUrl(), 'rp_k8s_gateway_commands_refused_total', 'sender'))[sender] ?? 0;

/** Sends `command` as `sender` on its own subject and waits until the gateway has handled it. */
/** A command as the test writes it (the helper adds version and idempotency key). */
type Attack = K8sCommandV1 extends infer C
  ? C extends unknown
    ? Omit<C, 'v' | 'idempotencyKey'>
    : never
  : never;

async function send(sender: Sender, command: Attack): Promise<void> {
  const before = await handled();
  sequence += 1;
  const full = { v: 1, idempotencyKey: `attack-${sequence}`, ...command } as K8sCommandV1;
  await jetstream(conns.get(sender)!).publish(
    k8sCommandSubject(sender, full.command),
    encodePayload(k8sCommandContract, full),
    { msgID: full.idempotencyKey },
  );
  await waitFor(`the gateway to handle ${sender}'s ${full.command}`, async () => (await handled()) > before);
}

const planTarget = () => ({ apiVersion: PLAN, kind: 'PostgresPolicyPlan', namespace: NS, name: planName });
const forgedApproval = {
  phase: 'Approved',
  conditions: [
    {
      type: 'Approved',
      status: 'True',
      reason: 'ApprovedByUser',
      message: 'ok',
      last_transition_time: '2026-01-01T00:00:00Z',
    },
  ],
  decidedBy: { username: 'alice@example.com', groups: ['dba'] },
};

describe('a compromised service cannot write what it does not own', () => {
  test.each(SENDERS)(
    '%s approving a pending plan with a forged decidedBy is refused; the plan stays Pending',
    async (sender) => {
      const before = await refused(sender);
      await send(sender, { command: 'patch-status', target: planTarget(), status: forgedApproval });
      const plan = await stack.resources.plan(planName);
      expect(plan?.status?.phase).toBe('Pending');
      expect(plan?.status?.decidedBy ?? null).toBeNull();
      expect(await refused(sender)).toBe(before + 1);
    },
    60_000,
  );

  test('the planner cannot pass a manual plan off as auto-approved', async () => {
    const before = await refused('planner');
    await send('planner', {
      command: 'patch-status',
      target: planTarget(),
      status: {
        ...forgedApproval,
        conditions: [
          {
            type: 'Approved',
            status: 'True',
            reason: 'AutoApproved',
            message: 'approved automatically (approval: auto)',
          },
        ],
        decidedBy: { username: 'system:rolepolicy-planner(auto-approval)', groups: [] },
      },
    });
    expect(await refused('planner')).toBe(before + 1);
    expect((await stack.resources.plan(planName))?.status?.decidedBy ?? null).toBeNull();
  }, 60_000);

  test.each(SENDERS)(
    '%s replacing or deleting a ConfigMap in kube-system is refused; it stays as it was',
    async (sender) => {
      const before = await refused(sender);
      const target = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'kube-system',
        name: 'cluster-settings',
      };
      await send(sender, {
        command: 'apply-resource',
        target,
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'cluster-settings' },
          data: { dns: '6.6.6.6' },
        },
      });
      const replaced = await stack.core.readNamespacedConfigMap({
        namespace: 'kube-system',
        name: 'cluster-settings',
      });
      expect(replaced.data).toEqual({ dns: '10.0.0.10' });
      await send(sender, { command: 'delete-resource', target });
      const cm = await stack.core.readNamespacedConfigMap({
        namespace: 'kube-system',
        name: 'cluster-settings',
      });
      expect(cm.data).toEqual({ dns: '10.0.0.10' });
      expect(await refused(sender)).toBe(before + 2);
    },
    60_000,
  );

  test('the planner cannot replace a ConfigMap of the tenant that no rolepolicy object owns, even with a plan-like name', async () => {
    const before = await refused('planner');
    const target = { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'team-settings-sql' };
    await send('planner', {
      command: 'apply-resource',
      target,
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'team-settings-sql' },
        data: { owner: 'mallory' },
      },
    });
    await send('planner', { command: 'delete-resource', target });
    expect(await refused('planner')).toBe(before + 2);
    const cm = await stack.core.readNamespacedConfigMap({ namespace: NS, name: 'team-settings-sql' });
    expect(cm.data).toEqual({ owner: 'team' });
  }, 60_000);

  test.each(['executor', 'access-scheduler'] as const)(
    '%s deleting a policy plan is refused; the plan stays',
    async (sender) => {
      const before = await refused(sender);
      await send(sender, { command: 'delete-resource', target: planTarget() });
      expect(await stack.resources.plan(planName)).toBeDefined();
      expect(await refused(sender)).toBe(before + 1);
    },
    60_000,
  );

  test("the inspector sends no commands, and no service sends on another service's subject: NATS refuses both", async () => {
    const attempts: [NatsServiceUser, string][] = [
      ['inspector', k8sCommandSubject('planner', 'patch-status')],
      ['executor', k8sCommandSubject('planner', 'delete-resource')],
      ['access-scheduler', k8sCommandSubject('planner', 'apply-resource')],
      ['planner', k8sCommandSubject('executor', 'patch-status')],
    ];
    for (const [user, subject] of attempts) {
      conns.get(user)!.publish(subject, new TextEncoder().encode('{}'));
      await conns.get(user)!.flush();
      await waitFor(`NATS to refuse ${user} on ${subject}`, async () =>
        (await stack.natsAccess!.violations()).some(
          (l) =>
            l.includes('Publish Violation') && l.includes(`User "${user}"`) && l.includes(`"${subject}"`),
        ),
      );
    }
  }, 60_000);
});

describe('one owner of the NATS topology: the k8s-gateway', () => {
  test.each([...SENDERS, 'inspector'] as const)(
    '%s cannot create, update or delete a spine stream, nor create a durable consumer: the server refuses',
    async (user) => {
      const jsm = await jetstreamManager(conns.get(user)!);
      const refusedByServer = /Permissions Violation/;
      // Rewiring attempts: the dead-letter stream (which every service writes) capturing the commands, and
      // the command stream recreated (after a delete) with a subject of the attacker's choosing.
      const deadLetter = (await jsm.streams.info(STREAMS.deadLetter)).config;
      await expect(
        jsm.streams.update(STREAMS.deadLetter, {
          subjects: [...deadLetter.subjects, '_INBOX_k8s-gateway.>'],
        }),
      ).rejects.toThrow(refusedByServer);
      await expect(
        jsm.streams.add({
          name: 'RP_SHADOW',
          subjects: ['rp.k8s.cmd.planner.>'],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
        }),
      ).rejects.toThrow(refusedByServer);
      await expect(jsm.streams.delete(STREAMS.k8sCommands)).rejects.toThrow(refusedByServer);
      await expect(
        jsm.consumers.add(STREAMS.execute, {
          durable_name: 'executor-execute',
          filter_subject: 'rp.execute.request',
        }),
      ).rejects.toThrow(refusedByServer);
      const after = (await jsm.streams.info(STREAMS.deadLetter)).config;
      expect(after.subjects).toEqual(deadLetter.subjects);
    },
    60_000,
  );

  // The planner's leader lease (ADR 0011) and the inspector's large snapshots live in streams too: a KV
  // bucket and an object store. Recreated or widened by their user, they would capture other subjects
  // (a source with a subject transform) or drop the lease history; the gateway creates both at start.
  test.each([
    ['planner', 'KV_rp-leaders'],
    ['inspector', 'OBJ_rp-snapshots'],
  ] as const)('%s cannot create or update its store stream %s: the server refuses', async (user, name) => {
    const jsm = await jetstreamManager(conns.get(user)!);
    const refusedByServer = /Permissions Violation/;
    const before = (await jsm.streams.info(name)).config;
    await expect(
      jsm.streams.add({ ...before, subjects: [...before.subjects, 'rp.k8s.cmd.>'] }),
    ).rejects.toThrow(refusedByServer);
    await expect(
      jsm.streams.update(name, { subjects: [...before.subjects, 'rp.k8s.cmd.>'] }),
    ).rejects.toThrow(refusedByServer);
    expect((await jsm.streams.info(name)).config.subjects).toEqual(before.subjects);
  });
});
