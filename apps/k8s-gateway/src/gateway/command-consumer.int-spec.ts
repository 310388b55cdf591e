// The gateway's command loop on a real JetStream work queue: commands with one ordering key are applied one
// at a time in stream order, other keys are not held up behind a slow one, unkeyed commands keep stream
// order among themselves, at most `concurrency` are in flight, and a command waiting behind its key is not
// redelivered when it outlives ack_wait.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  DEFAULT_BACKOFF,
  JetStreamPublisher,
  ensureTopology,
  k8sCommandContract,
  type ConsumerDefinition,
  type K8sCommandV1,
} from '@rolepolicy/contracts';
import { createNatsSandbox, eventually, type NatsSandbox } from '@rolepolicy/testing';
import { CommandConsumer } from './command-consumer.js';
import type { CommandOutcome } from './command-outcome.js';

const APPLIED: CommandOutcome = { kind: 'applied', resourceVersion: '1' };
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

let sandbox: NatsSandbox;
let nc: NatsConnection;
let consumer: CommandConsumer | undefined;

/** A gate a test opens when it wants the command behind it to finish. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

beforeEach(async () => {
  sandbox = await createNatsSandbox();
  nc = await connect({ servers: sandbox.url });
});

afterEach(async () => {
  await consumer?.stop();
  consumer = undefined;
  await nc.close();
  await sandbox.cleanup();
});

async function setUp(ackWaitMs = 30_000) {
  const root = sandbox.subject('k8s.cmd');
  const def: ConsumerDefinition = {
    stream: sandbox.stream('cmd'),
    durable: sandbox.durable('gateway'),
    filterSubject: `${root}.>`,
    ackWaitMs,
    maxDeliver: 5,
    maxAckPending: 256,
  };
  await ensureTopology(await jetstreamManager(nc), {
    streams: [
      {
        name: def.stream,
        subjects: [def.filterSubject],
        retention: 'workqueue',
        maxAgeMs: 60_000,
        duplicateWindowMs: 10_000,
      },
    ],
    consumers: [def],
  });
  const contract = { ...k8sCommandContract, subject: def.filterSubject };
  const publisher = new JetStreamPublisher(nc);
  let n = 0;
  const send = async (name: string, orderingKey?: string) => {
    n += 1;
    const command: K8sCommandV1 = {
      v: 1,
      command: 'delete-resource',
      target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name },
      idempotencyKey: `test/${n}`,
      ...(orderingKey === undefined ? {} : { orderingKey }),
    };
    await publisher.publish(contract, `${root}.delete-resource`, command, command.idempotencyKey);
  };
  return { def, contract, send };
}

function start(
  def: ConsumerDefinition,
  contract: typeof k8sCommandContract,
  apply: (command: K8sCommandV1) => Promise<CommandOutcome>,
  concurrency: number,
) {
  consumer = new CommandConsumer(nc, {
    consumer: def,
    contract,
    deadLetterSubject: (s) => `${sandbox.subject('dead')}.${s}`,
    backoff: DEFAULT_BACKOFF,
    apply,
    report: async () => undefined,
    log: quiet,
    concurrency,
  });
  consumer.start();
}

test('one key in stream order, one at a time; another key is not held up by a slow command', async () => {
  const { def, contract, send } = await setUp();
  const slow = gate();
  const started: string[] = [];
  const done: string[] = [];
  let insideA = 0;
  let maxInsideA = 0;
  start(
    def,
    contract,
    async (command) => {
      const name = command.target.name;
      started.push(name);
      if (name.startsWith('a')) {
        insideA += 1;
        maxInsideA = Math.max(maxInsideA, insideA);
        if (name === 'a1') await slow.promise;
        insideA -= 1;
      }
      done.push(name);
      return APPLIED;
    },
    8,
  );
  await send('a1', 'policy/ns/a');
  await send('a2', 'policy/ns/a');
  await send('b1', 'policy/ns/b');
  await send('a3', 'policy/ns/a');
  await send('b2', 'policy/ns/b');
  // b's commands finish while a1 is still held; a2 and a3 have not even started.
  await eventually('b1 and b2 applied', () => done.length === 2);
  expect(done).toEqual(['b1', 'b2']);
  expect(started).toEqual(['a1', 'b1', 'b2']);
  slow.open();
  await eventually('every command applied', () => done.length === 5);
  expect(done).toEqual(['b1', 'b2', 'a1', 'a2', 'a3']);
  expect(maxInsideA).toBe(1);
  // Every command was acked: the work queue is empty.
  const jsm = await jetstreamManager(nc);
  await eventually(
    'an empty work queue',
    async () => (await jsm.streams.info(def.stream)).state.messages === 0,
  );
});

test('unkeyed commands keep stream order among themselves', async () => {
  const { def, contract, send } = await setUp();
  const slow = gate();
  const done: string[] = [];
  start(
    def,
    contract,
    async (command) => {
      if (command.target.name === 'u1') await slow.promise;
      done.push(command.target.name);
      return APPLIED;
    },
    8,
  );
  await send('u1');
  await send('u2');
  await send('k1', 'policy/ns/k');
  await eventually('k1 applied', () => done.length === 1);
  expect(done).toEqual(['k1']);
  slow.open();
  await eventually('every command applied', () => done.length === 3);
  expect(done).toEqual(['k1', 'u1', 'u2']);
});

test('at most `concurrency` commands are in flight', async () => {
  const { def, contract, send } = await setUp();
  const release = gate();
  let inside = 0;
  let maxInside = 0;
  let finished = 0;
  start(
    def,
    contract,
    async () => {
      inside += 1;
      maxInside = Math.max(maxInside, inside);
      await release.promise;
      inside -= 1;
      finished += 1;
      return APPLIED;
    },
    3,
  );
  for (let i = 0; i < 10; i++) await send(`c${i}`, `policy/ns/c${i}`);
  await eventually('three in flight', () => inside === 3);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(maxInside).toBe(3);
  release.open();
  await eventually('every command applied', () => finished === 10);
  expect(maxInside).toBe(3);
});

test('a command waiting behind its key past ack_wait is not redelivered', async () => {
  const { def, contract, send } = await setUp(1_000);
  const slow = gate();
  const applied: string[] = [];
  start(
    def,
    contract,
    async (command) => {
      if (command.target.name === 'w1') await slow.promise;
      applied.push(command.target.name);
      return APPLIED;
    },
    4,
  );
  await send('w1', 'policy/ns/w');
  await send('w2', 'policy/ns/w');
  await new Promise((resolve) => setTimeout(resolve, 2_500)); // 2.5 ack_wait periods
  slow.open();
  await eventually('both applied', () => applied.length === 2);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(applied).toEqual(['w1', 'w2']);
});
