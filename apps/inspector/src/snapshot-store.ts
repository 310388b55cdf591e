// Large snapshots go to a JetStream object store bucket and travel by reference: core NATS messages are
// capped (1 MiB by default) and a full-size policy's snapshot can exceed that.
import type { ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { bindSnapshotBucket, type BindOptions } from '@rolepolicy/contracts';

/** Stores snapshot bytes by name in one bucket, which the k8s-gateway creates (ADR 0022). */
export class SnapshotStore {
  private store: Promise<ObjectStore> | null = null;

  constructor(
    private readonly nats: NatsConnection,
    readonly bucket: string,
  ) {}

  /**
   * Waits (bounded) until the bucket exists and opens it; called at start so a missing bucket shows at once.
   * @throws Error naming the missing stream once the wait is over
   */
  async bind(options: BindOptions = {}): Promise<void> {
    await this.open(options);
  }

  /** Puts `bytes` under `name` and resolves once the server has it. */
  async put(name: string, bytes: Uint8Array): Promise<void> {
    const store = await this.open();
    await store.putBlob({ name }, bytes);
  }

  private open(options: BindOptions = {}): Promise<ObjectStore> {
    // Binding only: this user may not create or update the bucket's stream. A failed bind is retried on the
    // next request rather than remembered.
    this.store ??= bindSnapshotBucket(this.nats, this.bucket, options).catch((error: unknown) => {
      this.store = null;
      throw error;
    });
    return this.store;
  }
}
