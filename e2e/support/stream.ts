// Reads what the services published on the private nats-server: the last resource event of an object
// on the production `RP_RESOURCES` stream, as the planner would receive it, or every event as it is sent.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import {
  resourceSubject,
  STREAMS,
  SUBJECTS,
  type ExecuteResultV1,
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

/** Resource events of one object as they are published, from the moment of the call. */
export type EventRecorder = {
  /** Events received so far, oldest first. */
  events(): readonly ResourceEventV1[];
  stop(): Promise<void>;
};

/**
 * Records every `rp.resource.<kind>.<namespace>.<name>` event published from now on (the stream keeps only
 * the latest per object, so an object's status history is watched live, with a core subscription).
 */
export async function recordResourceEvents(
  natsUrl: string,
  kind: ResourceKindToken,
  namespace: string,
  name: string,
): Promise<EventRecorder> {
  const nc = await connect({ servers: natsUrl });
  const events: ResourceEventV1[] = [];
  nc.subscribe(resourceSubject(kind, namespace, name), {
    callback: (_err, msg) => void events.push(msg.json() as ResourceEventV1),
  });
  await nc.flush();
  return { events: () => [...events], stop: () => nc.close() };
}

/** Every execution result the executors publish, as a plain subscriber sees them (beside the planner's durable). */
export type ExecuteResultWatch = {
  readonly results: ExecuteResultV1[];
  close(): Promise<void>;
};

/** Subscribes to `rp.execute.result` on the stack's broker and collects the results in arrival order. */
export async function watchExecuteResults(natsUrl: string): Promise<ExecuteResultWatch> {
  const nc = await connect({ servers: natsUrl });
  const results: ExecuteResultV1[] = [];
  const subscription = nc.subscribe(SUBJECTS.executeResult, {
    callback: (err, msg) => {
      if (!err) results.push(msg.json<ExecuteResultV1>());
    },
  });
  return {
    results,
    close: async () => {
      subscription.unsubscribe();
      await nc.close();
    },
  };
}
