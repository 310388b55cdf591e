// Leader leases in the JetStream KV bucket `rp-leaders` (ADR 0011): one key per elected service, written
// only with compare-and-swap on the key's revision. The record says who holds the lease, for how long a
// holder may go without renewing, and the epoch (the fencing token, raised on every change of holder).
// Expiry is never judged from a timestamp in the record: readers time it on their own clock.
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** The KV bucket of leader leases (stream `KV_rp-leaders`). */
export const LEADER_LEASE_BUCKET = 'rp-leaders';

/** The value stored under a lease's key. */
export type LeaseRecord = {
  /** Identity of the holder; empty when the last holder released the lease. */
  readonly holder: string;
  /** Fencing token: raised by one on every acquisition; commands of older epochs are refused. */
  readonly epoch: number;
  /** How long the holder may go without renewing before a candidate may take over. */
  readonly durationMs: number;
  /**
   * The handover point, written with each acquisition: the last stream sequence of RP_K8S_COMMANDS the
   * new holder saw before taking the lease. Commands of the previous epoch up to it were sent before the
   * takeover and are still applied (the new holder waits for them); later ones are refused.
   */
  readonly handoverSeq?: number;
};

/** A lease record with the KV revision it was read at (the compare-and-swap handle). */
export type LeaseEntry = { readonly record: LeaseRecord; readonly revision: number };

/** A write lost to a concurrent writer (the revision moved, or the key exists). */
export class LeaseConflict extends Error {}

/** What an election needs from the lease's storage. */
export interface LeaseStore {
  /** The current record, or null when the key has none (never written, deleted, purged). */
  read(): Promise<LeaseEntry | null>;
  /** Writes the first record; throws {@link LeaseConflict} when one exists. Returns the new revision. */
  create(record: LeaseRecord): Promise<number>;
  /** Replaces the record read at `revision`; throws {@link LeaseConflict} when it moved. */
  update(record: LeaseRecord, revision: number): Promise<number>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The record's bytes (JSON). */
export function encodeLeaseRecord(record: LeaseRecord): Uint8Array {
  return encoder.encode(JSON.stringify(record));
}

/** Parses a stored record; null for anything malformed (treated as no lease). */
export function decodeLeaseRecord(bytes: Uint8Array): LeaseRecord | null {
  try {
    const value = JSON.parse(decoder.decode(bytes)) as Partial<LeaseRecord>;
    if (typeof value.holder !== 'string') return null;
    if (!Number.isInteger(value.epoch) || (value.epoch ?? 0) < 0) return null;
    if (!Number.isInteger(value.durationMs) || (value.durationMs ?? 0) <= 0) return null;
    const handover = Number.isInteger(value.handoverSeq) ? { handoverSeq: value.handoverSeq! } : {};
    return { holder: value.holder, epoch: value.epoch!, durationMs: value.durationMs!, ...handover };
  } catch {
    return null;
  }
}

/**
 * Opens the bucket without creating it (the planner, after waiting for it, and the gateway's fence checks):
 * the k8s-gateway creates it with the topology (ADR 0022).
 */
export async function openLeaseBucket(nats: NatsConnection): Promise<KV> {
  return new Kvm(nats).open(LEADER_LEASE_BUCKET);
}

/**
 * Creates the bucket when absent (one value per key, file storage) and leaves an existing one as it is.
 * Only the topology owner calls this at start (ADR 0022), and tests that stand in for it.
 */
export async function ensureLeaseBucket(nats: NatsConnection): Promise<KV> {
  return new Kvm(nats).create(LEADER_LEASE_BUCKET, { history: 1, description: 'leader leases (ADR 0011)' });
}

/**
 * Whether a command of `epoch`, at `streamSequence` of the command stream, may still be applied under
 * `current` (ADR 0011): the current epoch's always; the previous epoch's only up to the handover point;
 * anything older, or with no lease at all, never.
 */
export function fenceAdmits(current: LeaseRecord | null, epoch: number, streamSequence: number): boolean {
  if (current === null) return false;
  if (epoch === current.epoch) return true;
  return (
    epoch === current.epoch - 1 && current.handoverSeq !== undefined && streamSequence <= current.handoverSeq
  );
}

/** Reads one key's record; null when absent, deleted or malformed. */
export async function readLease(kv: KV, key: string): Promise<LeaseEntry | null> {
  const entry = await kv.get(key);
  if (entry === null || entry.operation !== 'PUT') return null;
  const record = decodeLeaseRecord(entry.value);
  return record === null ? null : { record, revision: entry.revision };
}

function isConflict(err: unknown): boolean {
  const text = err instanceof Error ? `${err.message} ${String((err as { code?: unknown }).code ?? '')}` : '';
  // 10071: wrong last sequence (update); create reports the key as existing.
  return /wrong last sequence|10071|key exists/i.test(text);
}

/** The {@link LeaseStore} of one key of the bucket. */
export function kvLeaseStore(kv: KV, key: string): LeaseStore {
  return {
    read: () => readLease(kv, key),
    create: async (record) => {
      try {
        return await kv.create(key, encodeLeaseRecord(record));
      } catch (err) {
        if (isConflict(err)) throw new LeaseConflict(`lease ${key} exists`, { cause: err });
        throw err;
      }
    },
    update: async (record, revision) => {
      try {
        return await kv.update(key, encodeLeaseRecord(record), revision);
      } catch (err) {
        if (isConflict(err))
          throw new LeaseConflict(`lease ${key} moved past revision ${revision}`, { cause: err });
        throw err;
      }
    },
  };
}
