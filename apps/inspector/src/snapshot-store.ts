// Large snapshots go to a JetStream object store bucket and travel by reference: core NATS messages are
// capped (1 MiB by default) and a full-size policy's snapshot can exceed that.
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long a stored snapshot stays readable: the planner fetches it right after the reply. */
export const SNAPSHOT_TTL_MS = 10 * 60 * 1000;

/** Stores snapshot bytes by name in one bucket, creating the bucket on first use. */
export class SnapshotStore {
  private store: Promise<ObjectStore> | null = null;

  constructor(
    private readonly nats: NatsConnection,
    readonly bucket: string,
  ) {}

  /** Puts `bytes` under `name` and resolves once the server has it. */
  async put(name: string, bytes: Uint8Array): Promise<void> {
    const store = await this.open();
    await store.putBlob({ name }, bytes);
  }

  private open(): Promise<ObjectStore> {
    // A failed create is retried on the next request rather than remembered.
    this.store ??= new Objm(this.nats)
      .create(this.bucket, { ttl: SNAPSHOT_TTL_MS * 1_000_000 })
      .catch((error: unknown) => {
        this.store = null;
        throw error;
      });
    return this.store;
  }
}

/**
 * Reads a snapshot the inspector stored (the planner's side of an `object` reply).
 * @returns the JSON bytes, or null when the object expired or never existed
 */
export async function readStoredSnapshot(
  nats: NatsConnection,
  bucket: string,
  name: string,
): Promise<Uint8Array | null> {
  const store = await new Objm(nats).open(bucket);
  return store.getBlob(name);
}
