// The two JetStream stores beside the spine streams: the KV bucket of leader leases (ADR 0011) and the
// object store of large snapshots. The k8s-gateway creates them with the topology (ADR 0022); the planner
// and the inspector only bind, so no other user may create or update their streams.
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { bindStreams, type BindOptions } from './ensure-topology.js';
import { LEADER_LEASE_BUCKET, ensureLeaseBucket } from './leases/leader-lease.js';

/** The object store bucket of large snapshots (stream `OBJ_rp-snapshots`), the inspector's default. */
export const SNAPSHOT_BUCKET = 'rp-snapshots';

/** How long a stored snapshot stays readable: the planner fetches it right after the reply. */
export const SNAPSHOT_TTL_MS = 10 * 60 * 1000;

/** The stream that holds a KV bucket. */
export const kvStreamName = (bucket: string): string => `KV_${bucket}`;

/** The stream that holds an object store bucket. */
export const objectStreamName = (bucket: string): string => `OBJ_${bucket}`;

/**
 * Creates the snapshot bucket when absent (every snapshot expires after {@link SNAPSHOT_TTL_MS}); an existing
 * one is left as it is. Only the topology owner, and tests that stand in for it, call this.
 */
export async function ensureSnapshotBucket(nats: NatsConnection, bucket = SNAPSHOT_BUCKET): Promise<void> {
  await new Objm(nats).create(bucket, { ttl: SNAPSHOT_TTL_MS * 1_000_000 });
}

/** The topology owner's part at start: the leader lease bucket and the snapshot bucket. */
export async function ensureStores(nats: NatsConnection): Promise<void> {
  await ensureLeaseBucket(nats);
  await ensureSnapshotBucket(nats);
}

/**
 * Waits (bounded, like {@link bindStreams}) until the gateway created `bucket`, then opens it without
 * creating anything: needs only STREAM.INFO on its stream.
 * @throws Error naming the missing stream once the wait is over
 */
export async function bindSnapshotBucket(
  nats: NatsConnection,
  bucket: string,
  options: BindOptions = {},
): Promise<ObjectStore> {
  await bindStreams(await jetstreamManager(nats), [objectStreamName(bucket)], options);
  return new Objm(nats).open(bucket);
}

/** Waits (bounded) until the gateway created the leader lease bucket's stream. */
export async function bindLeaseStream(nats: NatsConnection, options: BindOptions = {}): Promise<void> {
  await bindStreams(await jetstreamManager(nats), [kvStreamName(LEADER_LEASE_BUCKET)], options);
}
