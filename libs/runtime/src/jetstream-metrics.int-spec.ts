// The JetStream gauges read the real server at scrape time: backlog, in-progress and redelivered
// messages of a durable consumer, dead letters in a stream; what the server cannot answer for is left
// out and counted, never shown stale.
import { AckPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { createNatsSandbox, type NatsSandbox } from '@rolepolicy/testing';
import { registerJetStreamMetrics } from './jetstream-metrics.js';

let sandbox: NatsSandbox;
let nc: NatsConnection;
let registry: Registry;
let work: string;
let dead: string;
let durable: string;

/** One sample of `name` from the exposition text, by its label set written as in the text. */
async function sample(name: string, labels: string): Promise<number | undefined> {
  const text = await registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

beforeAll(async () => {
  sandbox = await createNatsSandbox();
  nc = await connect({ servers: sandbox.url });
  const jsm = await jetstreamManager(nc);
  work = sandbox.stream('work');
  dead = sandbox.stream('dead');
  durable = sandbox.durable('worker');
  await jsm.streams.add({ name: work, subjects: [sandbox.subject('work.>')] });
  await jsm.streams.add({ name: dead, subjects: [sandbox.subject('dead.>')] });
  await jsm.consumers.add(work, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 60_000_000_000,
  });
  registry = new Registry();
  registerJetStreamMetrics(registry, nc, {
    consumers: [
      { stream: work, durable },
      { stream: work, durable: sandbox.durable('missing') },
    ],
    deadLetterStream: dead,
    cacheMs: 0,
  });
});

afterAll(async () => {
  await nc.close();
  await sandbox.cleanup();
});

test('pending, ack pending, redelivered per consumer and dead letters follow the server', async () => {
  const js = jetstream(nc);
  const labels = `stream="${work}",consumer="${durable}"`;
  expect(await sample('rp_jetstream_consumer_pending_messages', labels)).toBe(0);
  for (let i = 0; i < 5; i++) await js.publish(sandbox.subject(`work.${i}`), `m${i}`);
  await js.publish(sandbox.subject('dead.x'), 'letter');
  await js.publish(sandbox.subject('dead.y'), 'letter');
  expect(await sample('rp_jetstream_consumer_pending_messages', labels)).toBe(5);
  expect(await sample('rp_jetstream_dead_letter_messages', `stream="${dead}"`)).toBe(2);

  const consumer = await js.consumers.get(work, durable);
  // Each message is awaited as an event (a pull per message, bounded), never within one fixed wait: on a
  // loaded machine a redelivery can take longer than any single pull's expiry.
  const take = async (count: number): Promise<JsMsg[]> => {
    const taken: JsMsg[] = [];
    for (let pull = 0; pull < 30 && taken.length < count; pull++) {
      const message = await consumer.next({ expires: 2000 });
      if (message !== null) taken.push(message);
    }
    return taken;
  };
  const held = await take(2);
  expect(held).toHaveLength(2);
  expect(await sample('rp_jetstream_consumer_pending_messages', labels)).toBe(3);
  expect(await sample('rp_jetstream_consumer_ack_pending_messages', labels)).toBe(2);
  expect(await sample('rp_jetstream_consumer_redelivered_messages', labels)).toBe(0);

  held[0]!.nak();
  expect(await held[1]!.ackAck()).toBe(true);
  // The server may hand out a fresh message before it has processed the nak: acknowledge those and keep
  // waiting for the redelivery (they leave the ack-pending and redelivered counts as they are).
  // Three fresh messages remain, so the redelivery is at most the fourth message handed out.
  let redelivered: JsMsg | undefined;
  for (let turn = 0; turn < 4 && redelivered === undefined; turn++) {
    const [message] = await take(1);
    if (message?.info.redelivered === true) redelivered = message;
    else if (message !== undefined) expect(await message.ackAck()).toBe(true);
  }
  expect(redelivered?.seq).toBe(held[0]!.seq);
  expect(await sample('rp_jetstream_consumer_ack_pending_messages', labels)).toBe(1);
  expect(await sample('rp_jetstream_consumer_redelivered_messages', labels)).toBe(1);
}, 90_000);

test('a consumer the server does not know is left out of the scrape and counted as an error', async () => {
  // A sample without labels is written `name value`.
  const errors = async () =>
    Number(/^rp_jetstream_scrape_errors_total (\d+)/m.exec(await registry.metrics())?.[1] ?? 0);
  const before = await errors();
  const text = await registry.metrics();
  expect(text).not.toContain(sandbox.durable('missing'));
  expect(text).toContain(durable);
  expect(await errors()).toBeGreaterThan(before);
});
