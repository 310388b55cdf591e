// Reads what the services published on the private nats-server: the last resource event of an object
// on the production `RP_RESOURCES` stream, as the planner would receive it, or all of them.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import {
  resourceSubject,
  STREAMS,
  type ResourceEventV1,
  type ResourceKindToken,
} from '@rolepolicy/contracts';

/** The newest `rp.resource.<kind>.<namespace>.<name>` event, or undefined when none was published yet. */
export async function lastResourceEvent(
  natsUrl: string,
  kind: ResourceKindToken,
  namespace: string,
  name: string,
): Promise<ResourceEventV1 | undefined> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const stored = await jsm.streams
      .getMessage(STREAMS.resources, { last_by_subj: resourceSubject(kind, namespace, name) })
      .catch(() => null);
    return stored ? (stored.json() as ResourceEventV1) : undefined;
  } finally {
    await nc.close();
  }
}

/** Every stored `rp.resource.<kind>.<namespace>.<name>` event, oldest first (the object's status history). */
export async function resourceEvents(
  natsUrl: string,
  kind: ResourceKindToken,
  namespace: string,
  name: string,
): Promise<ResourceEventV1[]> {
  const nc = await connect({ servers: natsUrl });
  try {
    const consumer = await jetstream(nc).consumers.get(STREAMS.resources, {
      filter_subjects: resourceSubject(kind, namespace, name),
    });
    const events: ResourceEventV1[] = [];
    for (;;) {
      const batch = await consumer.fetch({ max_messages: 256, expires: 1_000 });
      let received = 0;
      for await (const msg of batch) {
        events.push(msg.json() as ResourceEventV1);
        received++;
      }
      if (received === 0) return events;
    }
  } finally {
    await nc.close();
  }
}
