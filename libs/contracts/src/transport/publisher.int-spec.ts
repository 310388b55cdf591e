// JetStreamPublisher's retry policy against a real broker that goes away: a publish made during the outage
// lands once the broker is back (stored once, by message id); without retries it fails; a payload that
// breaks its contract is refused at once, never retried.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startPrivateNatsServer, type PrivateNatsServer } from '@rolepolicy/testing';
import { Type } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { ensureTopology } from '../ensure-topology.js';
import { JetStreamPublisher } from './publisher.js';

const contract = defineContract({
  name: 'probe',
  subject: 'probe.>',
  versions: { 1: Type.Object({ v: Type.Literal(1), n: Type.Integer() }, { additionalProperties: false }) },
});

describe('JetStreamPublisher retries', () => {
  let server: PrivateNatsServer;
  let nc: NatsConnection;

  beforeAll(async () => {
    server = await startPrivateNatsServer();
    nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    await ensureTopology(await jetstreamManager(nc), {
      streams: [
        {
          name: 'PROBE',
          subjects: ['probe.>'],
          retention: 'limits',
          maxAgeMs: 600_000,
          duplicateWindowMs: 120_000,
        },
      ],
      consumers: [],
    });
  });

  afterAll(async () => {
    await nc.close();
    await server.dispose();
  });

  it('a publish made while the broker is down lands once it is back, stored once', async () => {
    const retried: number[] = [];
    const publisher = new JetStreamPublisher(nc, {
      retry: { attempts: 30, backoff: { initialMs: 100, maxMs: 500 } },
      onRetry: (_subject, attempt) => void retried.push(attempt),
    });
    await server.stop();
    const sent = publisher.publish(contract, 'probe.one', { v: 1, n: 1 }, 'probe-1');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await server.start();
    const receipt = await sent;
    expect(receipt).toMatchObject({ stream: 'PROBE', duplicate: false });
    expect(retried.length).toBeGreaterThan(0);
    const info = await (await jetstreamManager(nc)).streams.info('PROBE');
    expect(info.state.messages).toBe(1);
  }, 60_000);

  it('without retries a publish during an outage fails', async () => {
    const publisher = new JetStreamPublisher(nc, {
      retry: { attempts: 5, backoff: { initialMs: 100, maxMs: 100 } },
    });
    await server.stop();
    try {
      await expect(
        publisher.publish(contract, 'probe.two', { v: 1, n: 2 }, 'probe-2', { retry: false }),
      ).rejects.toThrow();
    } finally {
      await server.start();
    }
  }, 60_000);

  it('a payload that breaks its contract is refused at once, without a retry', async () => {
    const retried: number[] = [];
    const publisher = new JetStreamPublisher(nc, {
      retry: { attempts: 5, backoff: { initialMs: 100, maxMs: 100 } },
      onRetry: (_subject, attempt) => void retried.push(attempt),
    });
    await expect(publisher.publish(contract, 'probe.three', { v: 1, n: 'x' } as never)).rejects.toThrow(/n/);
    expect(retried).toEqual([]);
  });
});
