// Reads what the services published on the private nats-server: the last resource event of an object
// on the production `RP_RESOURCES` stream, as the planner would receive it.
import { jetstreamManager } from '@nats-io/jetstream';
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
