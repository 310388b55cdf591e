// The spine capture (spine-capture.ts) against a real nats-server: it counts what a stage publishes by subject
// and kind, leaves resync markers out, and keeps the replies to core requests made from a service's own inbox
// prefix (`_INBOX_<service>`, as the services connect).
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { STREAMS } from '@rolepolicy/contracts';
import { startPrivateNatsServer, type PrivateNatsServer } from '@rolepolicy/testing';

import { SpineCapture } from './spine-capture.js';
import { replyKey, resourceKey } from './spine-counts.js';

const encode = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

describe('spine capture', () => {
  let nats: PrivateNatsServer;
  let nc: NatsConnection;
  let planner: NatsConnection;

  beforeAll(async () => {
    nats = await startPrivateNatsServer();
    nc = await connect({ servers: nats.url });
    planner = await connect({ servers: nats.url, inboxPrefix: '_INBOX_planner' });
    await (
      await jetstreamManager(nc)
    ).streams.add({
      name: STREAMS.resources,
      subjects: ['rp.resource.>'],
      max_msgs_per_subject: 1,
    });
  });

  afterAll(async () => {
    await planner.close();
    await nc.close();
    await nats.dispose();
  });

  it('counts resource events by kind without markers, and keeps replies sent to a service inbox', async () => {
    nc.subscribe('rp.inspect.request', {
      callback: (_err, msg) => {
        msg.respond(encode({ v: 1, snapshot: 'x'.repeat(100) }));
      },
    });
    await nc.flush();
    const capture = await SpineCapture.start(nats.url);
    const js = jetstream(nc);
    await js.publish('rp.resource.postgrespolicy.bench.a', encode({ type: 'upsert' }));
    await js.publish('rp.resource.postgrespolicy._resync.0', encode({ kind: 'postgrespolicy' }));
    nc.publish('rp.execute.request', encode({ v: 1 })); // on no stream here: seen, not stored
    for (let i = 0; i < 5; i++) await planner.request('rp.inspect.request', encode({ v: 1, i }));
    const traffic = await capture.stop();

    expect(traffic.payloads.count(resourceKey('postgrespolicy'))).toBe(1);
    expect(traffic.resourcesStored).toBe(2); // the marker is stored, not counted as an event
    expect(traffic.payloads.count('rp.execute.request')).toBe(1);
    expect(traffic.payloads.count('rp.inspect.request')).toBe(5);
    expect([...traffic.requests]).toEqual(['rp.inspect.request']);
    // The capture listens to an inbox prefix from its first request on: that first reply may be missed.
    expect(traffic.payloads.count(replyKey('rp.inspect.request'))).toBeGreaterThanOrEqual(3);
    expect(traffic.payloads.meanBytes(replyKey('rp.inspect.request'))).toBeGreaterThan(100);
  });
});
