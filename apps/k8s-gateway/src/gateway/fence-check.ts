// The gateway's half of leader fencing (ADR 0011): a command that carries a fence is applied only when
// the lease in the `rp-leaders` KV bucket, read at apply time, admits it: the current epoch's commands, and
// the previous epoch's only when they entered the command stream before the successor took the lease (the
// successor waits for those before it acts). Whatever a deposed or paused leader sends later is refused.
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  fenceAdmits,
  openLeaseBucket,
  readLease,
  SharedRequest,
  type K8sCommandV1,
  type LeaseRecord,
} from '@rolepolicy/contracts';
import type { CommandOutcome } from './command-outcome.js';

/** Lease names whose reads are shared; a command naming yet another one starts the map afresh. */
const MAX_LEASES = 16;

/** Reads one lease key (null when absent); a failed read forgets the bucket handle. */
export type LeaseRead = (lease: string) => Promise<LeaseRecord | null>;

/** Checks fenced commands against the lease bucket. */
export class FenceCheck {
  private kv: KV | undefined;
  /**
   * One read in flight per lease, shared by the commands that arrived before it was sent (SharedRequest's
   * rule): each command still sees the lease as of a moment after it was received, but the commands applied
   * side by side (ADR 0016) cost one KV round trip instead of one each.
   */
  private readonly reads = new Map<string, SharedRequest<LeaseRecord | null>>();
  private readonly read: LeaseRead;

  constructor(nats: NatsConnection, read?: LeaseRead) {
    this.read =
      read ??
      (async (lease) => {
        try {
          this.kv ??= await openLeaseBucket(nats);
          return (await readLease(this.kv, lease))?.record ?? null;
        } catch (err) {
          this.kv = undefined;
          throw err;
        }
      });
  }

  /** The outcome that stops the command (fenced, or the lease unreadable: redeliver), or undefined to apply. */
  async refusal(command: K8sCommandV1, streamSequence: number): Promise<CommandOutcome | undefined> {
    const fence = command.fence;
    if (fence === undefined) return undefined;
    let current: LeaseRecord | null;
    try {
      current = await this.sharedRead(fence.lease).sentAfterNow();
    } catch (err) {
      const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
      return { kind: 'unavailable', message: `leader lease ${fence.lease} not readable: ${message}` };
    }
    if (fenceAdmits(current, fence.epoch, streamSequence)) return undefined;
    return { kind: 'fenced', lease: fence.lease, epoch: fence.epoch, current: current?.epoch };
  }

  private sharedRead(lease: string): SharedRequest<LeaseRecord | null> {
    let shared = this.reads.get(lease);
    if (shared === undefined) {
      if (this.reads.size >= MAX_LEASES) this.reads.clear();
      shared = new SharedRequest(() => this.read(lease));
      this.reads.set(lease, shared);
    }
    return shared;
  }
}
