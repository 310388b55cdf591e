// Asking the leading k8s-gateway for fresh resync markers (`<root>.k8s.resync`) and catching up with them:
// the loop behind ResourceCache.refresh (ADR 0005), kept apart from how the cache follows the stream.
import type { NatsConnection } from '@nats-io/transport-node';
import { decodePayload, encodePayload } from '../contract.js';
import { resyncReplyContract, resyncRequestContract } from '../messages/resync-request.js';
import type { ResourceKindToken } from '../subjects.js';
import type { RefreshOptions } from './cache-types.js';

/** What the loop needs from the cache. */
export interface RefreshTarget {
  readonly nc: NatsConnection;
  readonly subjectRoot: string;
  readonly kinds: readonly ResourceKindToken[];
  /** Catches up with everything the stream holds now (ResourceCache.sync). */
  sync(timeoutMs: number): Promise<void>;
  isStopped(): boolean;
}

/**
 * Asks for markers of `target.kinds` and syncs after the answer; keeps asking for `waitMs` while no gateway
 * answers, then rejects. Resolves with the kinds whose markers the gateway sent.
 */
export async function refreshMarkers(
  target: RefreshTarget,
  options: RefreshOptions = {},
): Promise<readonly ResourceKindToken[]> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  const subject = `${target.subjectRoot}.k8s.resync`;
  const payload = encodePayload({ ...resyncRequestContract, subject }, { v: 1, kinds: [...target.kinds] });
  for (;;) {
    try {
      const reply = await target.nc.request(subject, payload, { timeout: timeoutMs });
      const decoded = decodePayload({ ...resyncReplyContract, subject }, reply.data);
      if (!decoded.ok) throw new Error(`invalid resync reply: ${decoded.detail}`);
      await target.sync(timeoutMs);
      return decoded.value.published;
    } catch (error) {
      if (target.isStopped() || Date.now() + 500 > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
