// deploy/nats/nats-server.conf as shipped, on a private nats-server with TLS and fresh secrets from
// deploy/nats/generate.sh: each service user can do what its service does and cannot do what it must
// not (the matrix in docs/operations-nats.md), replies reach only the requester's private inbox, and
// JetStream's files hold no plaintext. Violations are read from the server log.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  SPINE_STREAMS,
  STREAMS,
  SUBJECTS,
  bindTopology,
  ensureTopology,
  ensureStores,
  bindSnapshotBucket,
  SNAPSHOT_BUCKET,
  LEADER_LEASE_BUCKET,
  kvLeaseStore,
  kvStreamName,
  objectStreamName,
  openLeaseBucket,
  k8sCommandSubject,
  resourceSubject,
  serviceTopology,
} from '@rolepolicy/contracts';
import {
  NATS_SERVICE_USERS,
  eventually,
  startSecuredNatsServer,
  type NatsServiceUser,
  type SecuredNatsServer,
} from '@rolepolicy/testing';

const SECRET_READ = 'rp.k8s.secret.read';
const SECRET_GENERATE = 'rp.k8s.secret.generate';
const TIMEOUT_MS = 60_000;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

let nats: SecuredNatsServer;
const conns = new Map<NatsServiceUser, NatsConnection>();
const as = (user: NatsServiceUser): NatsConnection => conns.get(user)!;

/** Resolves once the server logged that `user` was refused on `subject`. */
async function refused(user: NatsServiceUser, kind: 'Publish' | 'Subscription', subject: string) {
  await eventually(`${kind} violation of ${user} on ${subject}`, async () =>
    (await nats.violations()).some(
      (l) => l.includes(`${kind} Violation`) && l.includes(`User "${user}"`) && l.includes(`"${subject}"`),
    ),
  );
}

/** Subscribes and expects the server to refuse it. */
async function cannotSubscribe(user: NatsServiceUser, subject: string): Promise<void> {
  const sub = as(user).subscribe(subject);
  expect(await sub.closed).toBeInstanceOf(Error);
  await refused(user, 'Subscription', subject);
}

/** Publishes and expects the server to refuse it (core NATS gives the publisher no answer). */
async function cannotPublish(user: NatsServiceUser, subject: string): Promise<void> {
  as(user).publish(subject, enc('{}'));
  await as(user).flush();
  await refused(user, 'Publish', subject);
}

beforeAll(async () => {
  nats = await startSecuredNatsServer();
  for (const user of NATS_SERVICE_USERS) conns.set(user, await nats.connect(user));
  // As at start: the gateway creates the whole topology, every other service binds to its part (ADR 0022).
  await ensureTopology(await jetstreamManager(as('k8s-gateway')), serviceTopology('k8s-gateway'));
  await ensureStores(as('k8s-gateway'));
  for (const user of NATS_SERVICE_USERS) {
    await bindTopology(await jetstreamManager(as(user)), serviceTopology(user), { timeoutMs: 10_000 });
  }
}, TIMEOUT_MS);

afterAll(async () => {
  for (const nc of conns.values()) await nc.close().catch(() => undefined);
  await nats?.dispose();
});

describe('who may do what', () => {
  test(
    'without TLS, or without a password, nothing connects',
    async () => {
      await expect(
        connect({ servers: `nats://127.0.0.1:${nats.server.port}`, user: 'planner', pass: 'x', tls: null }),
      ).rejects.toThrow();
      await expect(
        nats.connect('planner', { inboxPrefix: '_INBOX_planner' }).then((nc) => nc.close()),
      ).resolves.toBe(undefined);
      await expect(
        connect({ servers: `tls://127.0.0.1:${nats.server.port}`, tls: { caFile: nats.caFile } }),
      ).rejects.toThrow(/Authorization/i);
    },
    TIMEOUT_MS,
  );

  test(
    'the gateway created the spine, every other service bound to it: the streams exist and each durable consumer is there',
    async () => {
      const jsm = await jetstreamManager(as('k8s-gateway'));
      for (const stream of SPINE_STREAMS)
        expect((await jsm.streams.info(stream.name)).config.name).toBe(stream.name);
      const own = await jetstreamManager(as('executor'));
      expect((await own.consumers.info(STREAMS.execute, 'executor-execute')).name).toBe('executor-execute');
      // A service sees its own durable consumer, not another service's (the gateway, their creator, sees all).
      const planner = await jetstreamManager(as('planner'));
      await expect(planner.consumers.info(STREAMS.execute, 'executor-execute')).rejects.toThrow(
        /Permissions Violation/,
      );
    },
    TIMEOUT_MS,
  );

  test(
    'the gateway publishes resources and consumes commands; the planner sends commands and follows resources',
    async () => {
      const ack = await jetstream(as('k8s-gateway')).publish(
        resourceSubject('secret', 'team-a', 'app.prod'),
        enc('{"v":1}'),
      );
      expect(ack.stream).toBe(STREAMS.resources);
      // The planner's ResourceCache: an ordered consumer on RP_RESOURCES.
      const ordered = await jetstream(as('planner')).consumers.get(STREAMS.resources, {
        filter_subjects: 'rp.resource.secret.>',
        deliver_policy: DeliverPolicy.LastPerSubject,
      });
      expect((await ordered.next({ expires: 5_000 }))?.subject).toBe('rp.resource.secret.team-a.app~prod');

      await jetstream(as('planner')).publish(k8sCommandSubject('planner', 'patch-status'), enc('{"v":1}'));
      const commands = await jetstream(as('k8s-gateway')).consumers.get(
        STREAMS.k8sCommands,
        'k8s-gateway-commands',
      );
      const command = await commands.next({ expires: 5_000 });
      expect(command?.subject).toBe('rp.k8s.cmd.planner.patch-status');
      await command?.ackAck();
    },
    TIMEOUT_MS,
  );

  test(
    'the executor consumes rp.execute.request and reports on rp.execute.result, which the planner consumes',
    async () => {
      await jetstream(as('planner')).publish(SUBJECTS.executeRequest, enc('{"v":2}'));
      const work = await jetstream(as('executor')).consumers.get(STREAMS.execute, 'executor-execute');
      const request = await work.next({ expires: 5_000 });
      expect(request?.subject).toBe(SUBJECTS.executeRequest);
      request?.working();
      await request?.ackAck();
      await jetstream(as('executor')).publish(SUBJECTS.executeResult, enc('{"v":1}'));
      const results = await jetstream(as('planner')).consumers.get(
        STREAMS.execute,
        'planner-execute-results',
      );
      const result = await results.next({ expires: 5_000 });
      expect(result?.subject).toBe(SUBJECTS.executeResult);
      await result?.ackAck();
      // Failed work goes to the dead-letter stream.
      await jetstream(as('executor')).publish(`rp.deadletter.${SUBJECTS.executeRequest}`, enc('{"v":1}'));
    },
    TIMEOUT_MS,
  );

  test(
    'the access-scheduler consumes resource events through its durable consumer',
    async () => {
      await jetstream(as('k8s-gateway')).publish(
        resourceSubject('ephemeralaccessrequest', 'ns', 'r'),
        enc('{}'),
      );
      const events = await jetstream(as('access-scheduler')).consumers.get(
        STREAMS.resources,
        'access-scheduler-resources',
      );
      expect((await events.next({ expires: 5_000 }))?.subject).toMatch(/^rp\.resource\./);
    },
    TIMEOUT_MS,
  );

  test(
    'Secret reads: the gateway answers planner and executor in its queue group; generation only the executor; resync requests the planner',
    async () => {
      const responder = as('k8s-gateway').subscribe(SECRET_READ, {
        queue: 'k8s-gateway',
        callback: (_err, msg) => void msg.respond(enc(`value for ${dec(msg.data)}`)),
      });
      const generator = as('k8s-gateway').subscribe(SECRET_GENERATE, {
        queue: 'k8s-gateway',
        callback: (_err, msg) => void msg.respond(enc('generated')),
      });
      await as('k8s-gateway').flush();
      const resync = as('k8s-gateway').subscribe('rp.k8s.resync', {
        queue: 'k8s-gateway',
        callback: (_err, msg) => void msg.respond(enc('markers sent')),
      });
      await as('k8s-gateway').flush();
      for (const user of ['planner', 'executor'] as const) {
        const reply = await as(user).request(SECRET_READ, enc(user), { timeout: 5_000 });
        expect(dec(reply.data)).toBe(`value for ${user}`);
      }
      expect(dec((await as('executor').request(SECRET_GENERATE, enc(''), { timeout: 5_000 })).data)).toBe(
        'generated',
      );
      expect(dec((await as('planner').request('rp.k8s.resync', enc(''), { timeout: 5_000 })).data)).toBe(
        'markers sent',
      );
      // The inspector gets its connection from the planner; only an approved execution generates passwords.
      await cannotPublish('inspector', SECRET_READ);
      await cannotPublish('inspector', SECRET_GENERATE);
      await cannotPublish('planner', SECRET_GENERATE);
      // The access-scheduler reads the target's connection to fingerprint it (ADR 0008), never generates.
      await cannotPublish('access-scheduler', SECRET_GENERATE);
      responder.unsubscribe();
      generator.unsubscribe();
      resync.unsubscribe();
    },
    TIMEOUT_MS,
  );

  test(
    'the inspector answers snapshot requests from the planner and writes the object store the planner reads',
    async () => {
      const responder = as('inspector').subscribe(SUBJECTS.inspectRequest, {
        queue: 'inspector',
        callback: (_err, msg) => void msg.respond(enc('snapshot')),
      });
      await as('inspector').flush();
      expect(
        dec((await as('planner').request('rp.inspect.request', enc('{}'), { timeout: 5_000 })).data),
      ).toBe('snapshot');
      responder.unsubscribe();
      // Large snapshots: the gateway created the bucket (beforeAll), the inspector binds and stores, the
      // planner reads.
      const bytes = enc(JSON.stringify({ roles: Array.from({ length: 2_000 }, (_, i) => `role_${i}`) }));
      const bucket = await bindSnapshotBucket(as('inspector'), SNAPSHOT_BUCKET, { timeoutMs: 10_000 });
      await bucket.putBlob({ name: 'snap-1' }, bytes);
      await bucket.putBlob({ name: 'snap-1' }, bytes);
      const read = await (await new Objm(as('planner')).open('rp-snapshots')).getBlob('snap-1');
      expect(read && dec(read)).toBe(dec(bytes));
      await cannotPublish('planner', '$O.rp-snapshots.C.forged');
    },
    TIMEOUT_MS,
  );
});

describe('what each service must not do', () => {
  test(
    'the executor cannot read commands, resources by core NATS, or the command stream',
    async () => {
      await cannotSubscribe('executor', 'rp.k8s.cmd.>');
      await cannotSubscribe('executor', 'rp.resource.>');
      await cannotPublish('executor', `$JS.API.CONSUMER.CREATE.${STREAMS.k8sCommands}.steal`);
      await cannotPublish('executor', `$JS.API.STREAM.DELETE.${STREAMS.resources}`);
    },
    TIMEOUT_MS,
  );

  test(
    'only the gateway publishes resource events and answers Secret requests',
    async () => {
      for (const user of ['planner', 'inspector', 'executor', 'access-scheduler'] as const) {
        await cannotPublish(user, resourceSubject('secret', 'team-a', 'forged'));
        await cannotSubscribe(user, SECRET_READ);
      }
    },
    TIMEOUT_MS,
  );

  test(
    "no service reads another service's inbox: the planner cannot subscribe to the executor's replies",
    async () => {
      await cannotSubscribe('planner', '_INBOX_executor.>');
      await cannotSubscribe('planner', '_INBOX.>');
      await cannotSubscribe('inspector', '_INBOX_planner.>');
      // Connecting with another service's inbox prefix does not help: its requests get no reply.
      const impostor = await nats.connect('planner', { inboxPrefix: '_INBOX_executor' });
      try {
        await expect(impostor.request('rp.inspect.request', enc('{}'), { timeout: 2_000 })).rejects.toThrow();
      } finally {
        await impostor.close();
      }
    },
    TIMEOUT_MS,
  );

  test(
    'the planner holds its lease in the bucket the gateway created; neither it nor the inspector creates or updates a store stream',
    async () => {
      const lease = kvLeaseStore(await openLeaseBucket(as('planner')), 'planner');
      const current = await lease.read();
      const record = { holder: 'planner-0', epoch: (current?.record.epoch ?? 0) + 1, durationMs: 15_000 };
      if (current === null) await lease.create(record);
      else await lease.update(record, current.revision);
      expect((await lease.read())?.record.holder).toBe('planner-0');
      for (const [user, bucket] of [
        ['planner', kvStreamName(LEADER_LEASE_BUCKET)],
        ['inspector', objectStreamName(SNAPSHOT_BUCKET)],
      ] as const) {
        await cannotPublish(user, `$JS.API.STREAM.CREATE.${bucket}`);
        await cannotPublish(user, `$JS.API.STREAM.UPDATE.${bucket}`);
      }
    },
    TIMEOUT_MS,
  );

  test(
    'the inspector sends no commands and no execution requests; the access-scheduler only scoped ones',
    async () => {
      await cannotPublish('inspector', k8sCommandSubject('planner', 'apply-resource'));
      await cannotPublish('inspector', SUBJECTS.executeRequest);
      await cannotPublish('access-scheduler', SUBJECTS.executeRequest);
      await cannotPublish('access-scheduler', SUBJECTS.executeResult);
      await cannotPublish('executor', SUBJECTS.scopedExecuteRequest);
      await cannotPublish('executor', SUBJECTS.scopedRevokeRequest);
      await cannotPublish('planner', SUBJECTS.scopedRevokeRequest);
      await cannotPublish('planner', SUBJECTS.executeResult);
    },
    TIMEOUT_MS,
  );
});

test(
  'JetStream files are encrypted: a published marker is not in the store in plaintext',
  async () => {
    const marker = `plaintext-marker-${Date.now()}`;
    await jetstream(as('k8s-gateway')).publish(resourceSubject('secret', 'team-a', 'marker'), enc(marker));
    const files: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir)) {
        const full = path.join(dir, entry);
        if ((await stat(full)).isDirectory()) await walk(full);
        else files.push(full);
      }
    };
    await walk(nats.server.storeDir);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect((await readFile(file)).includes(Buffer.from(marker))).toBe(false);
    // The subscription-free consumer path still reads it back decrypted.
    const consumer = await jetstream(as('planner')).consumers.get(STREAMS.resources, {
      filter_subjects: resourceSubject('secret', 'team-a', 'marker'),
    });
    expect(dec((await consumer.next({ expires: 5_000 }))!.data)).toBe(marker);
  },
  TIMEOUT_MS,
);
