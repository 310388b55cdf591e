// Creates or updates the declared streams and durable consumers (the topology owner, ADR 0022; safe to run
// from every replica at once), or, for every other service, waits until they exist (bindTopology).
// Updates converge config drift (limits incl. messages per subject, ack wait, max deliver); lowering the
// per-subject limit makes the server drop the older messages of each subject.
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { ConsumerDefinition, StreamDefinition, Topology } from './topology.js';

const NANOS_PER_MS = 1_000_000;
const STREAM_NOT_FOUND = 10059;
const CONSUMER_NOT_FOUND = 10014;

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

async function ensureStream(jsm: JetStreamManager, def: StreamDefinition): Promise<void> {
  const config = {
    subjects: [...def.subjects],
    max_age: def.maxAgeMs * NANOS_PER_MS,
    duplicate_window: def.duplicateWindowMs * NANOS_PER_MS,
    // -1 is the server's "unlimited", so removing the limit from a definition also lifts it on the server.
    max_msgs_per_subject: def.maxMsgsPerSubject ?? -1,
  };
  try {
    await jsm.streams.info(def.name);
  } catch (err) {
    if (!isApiError(err, STREAM_NOT_FOUND)) throw err;
    try {
      await jsm.streams.add({
        name: def.name,
        ...config,
        retention: def.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
        storage: StorageType.File,
      });
      return;
    } catch {
      // Another replica created it between our info and add; fall through to the update.
    }
  }
  await jsm.streams.update(def.name, config);
}

async function ensureConsumer(jsm: JetStreamManager, def: ConsumerDefinition): Promise<void> {
  const updatable = {
    ack_wait: def.ackWaitMs * NANOS_PER_MS,
    max_deliver: def.maxDeliver,
    max_ack_pending: def.maxAckPending,
  };
  try {
    await jsm.consumers.info(def.stream, def.durable);
  } catch (err) {
    if (!isApiError(err, CONSUMER_NOT_FOUND)) throw err;
    // Adding with an identical config is idempotent on the server, so concurrent replicas agree.
    await jsm.consumers.add(def.stream, {
      durable_name: def.durable,
      filter_subject: def.filterSubject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ...updatable,
    });
    return;
  }
  await jsm.consumers.update(def.stream, def.durable, updatable);
}

/**
 * Makes the server hold every stream and consumer of `topology`, creating missing ones and
 * updating drifted limits. Streams first, because consumers live inside them.
 */
export async function ensureTopology(jsm: JetStreamManager, topology: Topology): Promise<void> {
  for (const stream of topology.streams) await ensureStream(jsm, stream);
  for (const consumer of topology.consumers) await ensureConsumer(jsm, consumer);
}

/** Options of {@link bindTopology}. */
export type BindOptions = {
  /** Give up after this long (default 120 s): the owner is not running, or the names differ. */
  readonly timeoutMs?: number;
  /** Between two looks (default 500 ms). */
  readonly intervalMs?: number;
  /** Told once what is still missing, so a waiting service says why it is not ready. */
  readonly waiting?: (missing: string) => void;
};

async function exists(lookup: () => Promise<unknown>, notFound: number): Promise<boolean> {
  try {
    await lookup();
    return true;
  } catch (err) {
    if (isApiError(err, notFound)) return false;
    throw err;
  }
}

/**
 * Waits until every stream and consumer of `topology` exists, creating nothing: a service that is not the
 * topology owner (ADR 0022) binds to what the k8s-gateway created. Needs only STREAM.INFO and CONSUMER.INFO.
 * @throws Error naming what is missing once `timeoutMs` passed
 */
export async function bindTopology(
  jsm: JetStreamManager,
  topology: Topology,
  options: BindOptions = {},
): Promise<void> {
  await waitUntilPresent(async () => {
    for (const s of topology.streams) {
      if (!(await exists(() => jsm.streams.info(s.name), STREAM_NOT_FOUND))) return `stream ${s.name}`;
    }
    for (const c of topology.consumers) {
      if (!(await exists(() => jsm.consumers.info(c.stream, c.durable), CONSUMER_NOT_FOUND)))
        return `consumer ${c.stream}/${c.durable}`;
    }
    return undefined;
  }, options);
}

/**
 * Waits until the named streams exist (a KV bucket's `KV_<bucket>`, an object store's `OBJ_<bucket>`), with
 * the same bound and messages as {@link bindTopology}: the k8s-gateway creates them with the topology.
 * @throws Error naming the missing stream once `timeoutMs` passed
 */
export async function bindStreams(
  jsm: JetStreamManager,
  names: readonly string[],
  options: BindOptions = {},
): Promise<void> {
  await waitUntilPresent(async () => {
    for (const name of names) {
      if (!(await exists(() => jsm.streams.info(name), STREAM_NOT_FOUND))) return `stream ${name}`;
    }
    return undefined;
  }, options);
}

async function waitUntilPresent(
  findMissing: () => Promise<string | undefined>,
  options: BindOptions,
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let told = false;
  for (;;) {
    const missing = await findMissing();
    if (missing === undefined) return;
    if (Date.now() >= deadline)
      throw new Error(`${missing} does not exist: the k8s-gateway creates the NATS topology (ADR 0022)`);
    if (!told) options.waiting?.(`waiting for the k8s-gateway to create ${missing} (ADR 0022)`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500));
  }
}
