// A service with `concurrency: 3` handles up to three messages of one consumer at once and never more:
// each slot pulls one message when it is free, so nothing waits prefetched behind a busy handler.
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

const SLOTS = 3;
const MESSAGES = 9;

let sandbox: NatsSandbox;
let names: WorkTopologyNames;
let consumerApp: INestApplication;
let publisherApp: INestApplication;
const deliveries: Delivery[] = [];

beforeAll(async () => {
  sandbox = await createNatsSandbox();
  names = {
    root: sandbox.subject('conc').replace(/\.conc$/, ''),
    workStream: sandbox.stream('work'),
    deadStream: sandbox.stream('dead'),
    durable: sandbox.durable('worker'),
    ackWaitMs: 30_000,
    maxDeliver: 3,
  };
  const shared = {
    topology: workTopology(names),
    contracts: [workContract(names.root)],
    deadLetterSubject: (subject: string) => deadLetterSubject(subject, names.root),
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
    concurrency: () => SLOTS,
  };
  consumerApp = await startService(consumer, {
    ...shared,
    env: await env(),
    imports: [workHandlerModule(names.root, (d) => deliveries.push(d))],
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

test(`${SLOTS} slots: up to ${SLOTS} messages in work at once, never more, each handled once`, async () => {
  const publisher = publisherApp.get(JetStreamPublisher);
  for (let i = 0; i < MESSAGES; i++) {
    // Each handler holds its message long enough for the other slots to pull theirs.
    const work = { v: 1 as const, id: `w${i}`, behaviour: 'ok' as const, delayMs: 1000 };
    await publisher.publish(workContract(names.root), `${names.root}.work.${work.id}`, work);
  }
  const deadline = Date.now() + 30_000;
  while (deliveries.filter((d) => d.phase === 'done').length < MESSAGES && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let inWork = 0;
  let most = 0;
  for (const d of deliveries) {
    inWork += d.phase === 'start' ? 1 : -1;
    most = Math.max(most, inWork);
  }
  expect(most).toBe(SLOTS);
  const done = deliveries.filter((d) => d.phase === 'done').map((d) => d.id);
  expect(done.sort()).toEqual(Array.from({ length: MESSAGES }, (_, i) => `w${i}`).sort());
  expect(deliveries.every((d) => d.deliveryCount === 1)).toBe(true);
}, 45_000);
