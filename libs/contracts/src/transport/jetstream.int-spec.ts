// The messaging spine on a real NATS server: one Nest app publishes, another handles; a throwing handler
// is redelivered; invalid payloads and exhausted retries land on the dead-letter subject; the consumer lives on.
import { jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { baseEnvSpec, startService, type ServiceDefinition } from '@rolepolicy/runtime';
import { createNatsSandbox, freePort, type NatsSandbox } from '@rolepolicy/testing';
import { decodePayload } from '../contract.js';
import { deadLetterContract, type DeadLetterV1 } from '../messages/dead-letter.js';
import { JetStreamPublisher } from './publisher.js';
import {
  workContract,
  workHandlerModule,
  workTopology,
  type Delivery,
  type WorkTopologyNames,
  type WorkV1,
} from './test-support/work.js';
import { deadLetterSubject } from '../subjects.js';

@Module({})
class EmptyModule {}

function serviceNamed(service: 'planner' | 'executor'): ServiceDefinition<ReturnType<typeof baseEnvSpec>> {
  return { service, envSpec: baseEnvSpec(0), module: EmptyModule };
}

/** Polls `probe` until it returns a value (not a timing assertion: it only bounds a hang). */
async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('JetStream transport between two Nest apps', () => {
  let sandbox: NatsSandbox;
  let names: WorkTopologyNames;
  let publisherApp: INestApplication;
  let consumerApp: INestApplication;
  let nc: NatsConnection;
  const deliveries: Delivery[] = [];

  const work = (id: string, behaviour: WorkV1['behaviour']): WorkV1 => ({ v: 1, id, behaviour });
  const publish = (w: WorkV1) =>
    publisherApp.get(JetStreamPublisher).publish(workContract(names.root), `${names.root}.work.${w.id}`, w);
  const of = (id: string) => deliveries.filter((d) => d.id === id);

  /** Reads every dead letter stored so far. */
  async function deadLetters(): Promise<DeadLetterV1[]> {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(names.deadStream);
    const letters: DeadLetterV1[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const stored = await jsm.streams.getMessage(names.deadStream, { seq });
      if (!stored) continue;
      const decoded = decodePayload(deadLetterContract, stored.data);
      if (decoded.ok) letters.push(decoded.value);
    }
    return letters;
  }

  beforeAll(async () => {
    sandbox = await createNatsSandbox();
    names = {
      root: sandbox.subject('spine').replace(/\.spine$/, ''),
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
      backoff: { initialMs: 50, maxMs: 200 },
    };
    const envFor = async () => ({
      NATS_URL: sandbox.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'error',
    });
    consumerApp = await startService(serviceNamed('executor'), {
      ...shared,
      env: await envFor(),
      imports: [workHandlerModule(names.root, (d) => deliveries.push(d))],
    });
    publisherApp = await startService(serviceNamed('planner'), { ...shared, env: await envFor() });
    nc = await connect({ servers: sandbox.url });
  }, 30_000);

  afterAll(async () => {
    await publisherApp?.close();
    await consumerApp?.close();
    await nc?.close();
    await sandbox?.cleanup();
  });

  it('a message published by one app is handled by the other and acked', async () => {
    await publish(work('hello', 'ok'));
    await eventually(() => of('hello').find((d) => d.phase === 'done'), 'hello handled');
    expect(of('hello')).toEqual([
      { id: 'hello', deliveryCount: 1, phase: 'start' },
      { id: 'hello', deliveryCount: 1, phase: 'done' },
    ]);
    const jsm = await jetstreamManager(nc);
    // Work-queue retention: an acked message leaves the stream.
    await eventually(
      async () => ((await jsm.streams.info(names.workStream)).state.messages === 0 ? true : undefined),
      'work queue drained',
    );
  }, 30_000);

  it('a handler that throws is redelivered and succeeds on the second try', async () => {
    await publish(work('flaky', 'fail_once'));
    await eventually(() => of('flaky').find((d) => d.phase === 'done'), 'flaky handled');
    expect(of('flaky').map((d) => `${d.phase}@${d.deliveryCount}`)).toEqual([
      'start@1',
      'threw@1',
      'start@2',
      'done@2',
    ]);
  }, 30_000);

  it('a handler that keeps throwing is dead-lettered after maxDeliver deliveries', async () => {
    await publish(work('doomed', 'fail_always'));
    const letter = await eventually(
      async () => (await deadLetters()).find((l) => l.subject.endsWith('.doomed')),
      'dead letter',
    );
    expect(letter).toMatchObject({
      reason: 'redelivery_exhausted',
      deliveryCount: 3,
      consumer: names.durable,
    });
    expect(letter.detail).toContain('work doomed failed on purpose');
    expect(of('doomed').filter((d) => d.phase === 'start')).toHaveLength(3);
  }, 30_000);

  it('malformed payloads land on the dead-letter subject and the consumer keeps running', async () => {
    const js = jetstream(nc);
    await js.publish(`${names.root}.work.garbage`, new TextEncoder().encode('{not json'));
    await js.publish(
      `${names.root}.work.noversion`,
      new TextEncoder().encode(JSON.stringify({ id: 'x', behaviour: 'ok' })),
    );
    await js.publish(
      `${names.root}.work.future`,
      new TextEncoder().encode(JSON.stringify({ v: 2, id: 'x', behaviour: 'ok' })),
    );
    await js.publish(
      `${names.root}.work.badshape`,
      new TextEncoder().encode(JSON.stringify({ v: 1, id: 'x', behaviour: 'explode' })),
    );
    await publish(work('after', 'ok'));

    await eventually(() => of('after').find((d) => d.phase === 'done'), 'valid message after the bad ones');
    const letters = await eventually(async () => {
      const all = (await deadLetters()).filter((l) => l.reason === 'invalid_payload');
      return all.length === 4 ? all : undefined;
    }, 'four dead letters');
    const bySubject = Object.fromEntries(letters.map((l) => [l.subject.split('.').pop(), l.detail]));
    expect(bySubject['garbage']).toContain('malformed_json');
    expect(bySubject['noversion']).toContain('missing_version');
    expect(bySubject['future']).toContain('unknown_version');
    expect(bySubject['badshape']).toContain('schema_mismatch');
    // The original bytes travel with the dead letter for replay.
    const garbage = letters.find((l) => l.subject.endsWith('.garbage'));
    expect(Buffer.from(garbage?.data ?? '', 'base64').toString()).toBe('{not json');
    // None of the malformed ones reached the handler.
    expect(deliveries.filter((d) => d.id === 'x')).toEqual([]);
  }, 30_000);

  it('counts handled, retried and dead-lettered messages in /metrics', async () => {
    const body = await (await fetch(`${await consumerApp.getUrl()}/metrics`)).text();
    expect(body).toMatch(
      new RegExp(`rp_messages_handled_total\\{[^}]*consumer="${names.durable}"[^}]*\\} [1-9]`),
    );
    expect(body).toMatch(
      new RegExp(`rp_messages_failed_total\\{[^}]*consumer="${names.durable}"[^}]*\\} [1-9]`),
    );
    expect(body).toMatch(/rp_messages_dead_lettered_total\{[^}]*reason="invalid_payload"[^}]*\} 4/);
    expect(body).toContain('process_cpu_seconds_total');
  }, 30_000);

  it('re-publishing with the same message id is de-duplicated', async () => {
    const publisher = publisherApp.get(JetStreamPublisher);
    const w = work('once', 'ok');
    const first = await publisher.publish(workContract(names.root), `${names.root}.work.once`, w, 'once-key');
    const second = await publisher.publish(
      workContract(names.root),
      `${names.root}.work.once`,
      w,
      'once-key',
    );
    expect([first.duplicate, second.duplicate]).toEqual([false, true]);
    await eventually(() => of('once').find((d) => d.phase === 'done'), 'once handled');
    expect(of('once').filter((d) => d.phase === 'done')).toHaveLength(1);
  }, 30_000);

  it('ensuring the topology again is idempotent', async () => {
    const { ensureTopology } = await import('../ensure-topology.js');
    const jsm = await jetstreamManager(nc);
    await ensureTopology(jsm, workTopology(names));
    await ensureTopology(jsm, workTopology(names));
    const consumer = await jsm.consumers.info(names.workStream, names.durable);
    expect(consumer.config.max_deliver).toBe(3);
  }, 30_000);
});

export type { JsMsg };
