// The new leader's first step (ADR 0011): wait until every k8s-gateway command published before it took
// the lease (up to the handover sequence it wrote into the lease) has left the RP_K8S_COMMANDS work queue,
// so the fresh resync that follows shows everything the previous leader wrote. Bounded: a command stuck in
// redelivery must not keep the planner from leading forever.
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { STREAMS } from '@rolepolicy/contracts';

const POLL_MS = 100;

/** The last sequence of the command stream now (the handover point written with an acquisition). */
export async function lastCommandSeq(nats: NatsConnection): Promise<number> {
  const jsm = await jetstreamManager(nats);
  return (await jsm.streams.info(STREAMS.k8sCommands)).state.last_seq;
}

/**
 * Resolves true once the command stream holds nothing up to sequence `until`, false when `timeoutMs`
 * passed first or `cancelled()` says the term is over.
 */
export async function drainEarlierCommands(
  nats: NatsConnection,
  until: number,
  options: { readonly timeoutMs: number; readonly cancelled: () => boolean },
): Promise<boolean> {
  const jsm = await jetstreamManager(nats);
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const { state } = await jsm.streams.info(STREAMS.k8sCommands);
    if (state.messages === 0 || state.first_seq > until) return true;
    if (Date.now() >= deadline || options.cancelled()) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
