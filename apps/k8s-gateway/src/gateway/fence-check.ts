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
  type K8sCommandV1,
  type LeaseRecord,
} from '@rolepolicy/contracts';
import type { CommandOutcome } from './command-outcome.js';

/** Checks fenced commands against the lease bucket. */
export class FenceCheck {
  private kv: KV | undefined;

  constructor(private readonly nats: NatsConnection) {}

  /** The outcome that stops the command (fenced, or the lease unreadable: redeliver), or undefined to apply. */
  async refusal(command: K8sCommandV1, streamSequence: number): Promise<CommandOutcome | undefined> {
    const fence = command.fence;
    if (fence === undefined) return undefined;
    let current: LeaseRecord | null;
    try {
      this.kv ??= await openLeaseBucket(this.nats, { create: false });
      current = (await readLease(this.kv, fence.lease))?.record ?? null;
    } catch (err) {
      this.kv = undefined;
      const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
      return { kind: 'unavailable', message: `leader lease ${fence.lease} not readable: ${message}` };
    }
    if (fenceAdmits(current, fence.epoch, streamSequence)) return undefined;
    return { kind: 'fenced', lease: fence.lease, epoch: fence.epoch, current: current?.epoch };
  }
}
