// The planner's only way out to the spine while it leads: every publish first asks the election whether
// this replica is inside its term (on the clock, so a process that was paused past its renew deadline
// sends nothing), and every k8s-gateway command carries the term's epoch as its fence (ADR 0011).
import {
  k8sCommandContract,
  type JetStreamPublisher,
  type K8sCommandV1,
  type MessageContract,
} from '@rolepolicy/contracts';
import type { LeaderTerm } from './elector.js';

/** The planner's lease key in the `rp-leaders` bucket. */
export const PLANNER_LEASE = 'planner';

/** A write refused because this replica does not lead (the pass ends; the leader does the work). */
export class NotLeader extends Error {
  constructor() {
    super('this planner replica is not the leader');
  }
}

/**
 * Wraps a publisher for one leader term: it publishes only while `current()` is still that term (a pass
 * begun in an earlier term of this same replica sends nothing either), fenced with the term's epoch.
 */
export function leaderPublisher(
  inner: Pick<JetStreamPublisher, 'publish'>,
  current: () => LeaderTerm | undefined,
  term: LeaderTerm,
): Pick<JetStreamPublisher, 'publish'> {
  return {
    publish: (contract, subject, payload, msgId, options) => {
      if (current()?.epoch !== term.epoch) return Promise.reject(new NotLeader());
      const fenced =
        (contract as MessageContract) === (k8sCommandContract as MessageContract)
          ? ({
              ...(payload as K8sCommandV1),
              fence: { lease: PLANNER_LEASE, epoch: term.epoch },
            } as typeof payload)
          : payload;
      return inner.publish(contract, subject, fenced, msgId, options);
    },
  };
}
