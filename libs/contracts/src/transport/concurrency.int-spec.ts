// Slots per durable on a real NATS server: each slot pulls one message when it is free, so a durable with
// N slots handles up to N messages at once and never more, and nothing waits prefetched behind a busy
// handler. A service names the durables that get their own count (the executor's revocations); the others
// keep the default.
import type { INestApplication } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { baseEnvSpec, startService, type ServiceDefinition } from '@rolepolicy/runtime';
import { createNatsSandbox, freePort, type NatsSandbox } from '@rolepolicy/testing';
import { JetStreamPublisher } from './publisher.js';
import {
  workContract,
  workHandlerModule,
  workTopology,
  type Delivery,
  type WorkTopologyNames,
} from './test-support/work.js';
import { deadLetterSubject } from '../subjects.js';

@Module({})
class EmptyModule {}

/** Slots of every durable not named (the `main` work queue). */
const DEFAULT_SLOTS = 3;
/** Slots of the `urgent` durable, named in the service's slot counts. */
const URGENT_SLOTS = 5;
const MESSAGES = 9;

let sandbox: NatsSandbox;
let main: WorkTopologyNames;
let urgent: WorkTopologyNames;
let consumerApp: INestApplication;
let publisherApp: INestApplication;
const deliveries = { main: [] as Delivery[], urgent: [] as Delivery[] };

function namesOf(sandbox: NatsSandbox, queue: 'main' | 'urgent'): WorkTopologyNames {
  return {
    root: sandbox.subject(queue),
    workStream: sandbox.stream(`${queue}_work`),
    deadStream: sandbox.stream(`${queue}_dead`),
    durable: sandbox.durable(queue),
    ackWaitMs: 30_000,
    maxDeliver: 3,
  };
}

beforeAll(async () => {
  sandbox = await createNatsSandbox();
  main = namesOf(sandbox, 'main');
  urgent = namesOf(sandbox, 'urgent');
  const topologies = [workTopology(main), workTopology(urgent)];
  const shared = {
    topology: {
      streams: topologies.flatMap((t) => t.streams),
      consumers: topologies.flatMap((t) => t.consumers),
    },
    contracts: [workContract(main.root), workContract(urgent.root)],
    deadLetterSubject: (subject: string) =>
      deadLetterSubject(subject, subject.startsWith(`${urgent.root}.`) ? urgent.root : main.root),
  };
  const env = async () => ({
    NATS_URL: sandbox.url,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    LOG_LEVEL: 'error',
  });
  const consumer: ServiceDefinition<ReturnType<typeof baseEnvSpec>> = {
    service: 'executor',
    envSpec: baseEnvSpec(0),
    module: EmptyModule,
    concurrency: () => ({ default: DEFAULT_SLOTS, durables: { [urgent.durable]: URGENT_SLOTS } }),
  };
  consumerApp = await startService(consumer, {
    ...shared,
    env: await env(),
    imports: [
      workHandlerModule(main.root, (d) => deliveries.main.push(d)),
      workHandlerModule(urgent.root, (d) => deliveries.urgent.push(d)),
    ],
  });
  publisherApp = await startService(
    { service: 'planner', envSpec: baseEnvSpec(0), module: EmptyModule },
    { ...shared, env: await env() },
  );
}, 30_000);

afterAll(async () => {
  await publisherApp?.close();
  await consumerApp?.close();
  await sandbox?.cleanup();
});

/** The most messages that were in a handler at once, from the start and end of each delivery. */
function mostAtOnce(of: readonly Delivery[]): number {
  let inWork = 0;
  let most = 0;
  for (const d of of) {
    inWork += d.phase === 'start' ? 1 : -1;
    most = Math.max(most, inWork);
  }
  return most;
}

test(`a named durable runs its own ${URGENT_SLOTS} slots while another keeps the default ${DEFAULT_SLOTS}`, async () => {
  const publisher = publisherApp.get(JetStreamPublisher);
  for (let i = 0; i < MESSAGES; i++) {
    // Each handler holds its message long enough for the other slots to pull theirs.
    for (const names of [main, urgent]) {
      const work = { v: 1 as const, id: `w${i}`, behaviour: 'ok' as const, delayMs: 1000 };
      await publisher.publish(workContract(names.root), `${names.root}.work.${work.id}`, work);
    }
  }
  const deadline = Date.now() + 30_000;
  const done = (of: readonly Delivery[]) => of.filter((d) => d.phase === 'done').map((d) => d.id);
  while (
    done(deliveries.main).length + done(deliveries.urgent).length < 2 * MESSAGES &&
    Date.now() < deadline
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(mostAtOnce(deliveries.urgent)).toBe(URGENT_SLOTS);
  expect(mostAtOnce(deliveries.main)).toBe(DEFAULT_SLOTS);
  const all = Array.from({ length: MESSAGES }, (_, i) => `w${i}`).sort();
  expect(done(deliveries.main).sort()).toEqual(all);
  expect(done(deliveries.urgent).sort()).toEqual(all);
  const redelivered = [...deliveries.main, ...deliveries.urgent].filter((d) => d.deliveryCount !== 1);
  expect(redelivered).toEqual([]);
}, 45_000);
