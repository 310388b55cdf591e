// The Warning Event that tells a sender's side what became of its command (visible in kubectl describe on
// the target), or none: a failed Event is not reported with another Event, and a refusal about an object
// rolepolicy does not own leaves no trace there.
import type { CoreV1Event } from '@kubernetes/client-node';
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import { GROUP, VERSION } from '@rolepolicy/kube';
import { describeOutcome, type CommandOutcome } from './command-outcome.js';

/** The Event to create for a reported outcome, or undefined when none is written. */
export function outcomeEvent(
  command: K8sCommandV1,
  outcome: CommandOutcome,
  now: Date,
): CoreV1Event | undefined {
  const target = command.target;
  // A failed Event is not reported with another Event.
  if (target.kind === 'Event' || command.command === 'record-event') return undefined;
  // A refused command about an object rolepolicy does not own (a ConfigMap anywhere) leaves no trace
  // there: the log line and the metric tell the operator; an Event would let a sender write into any namespace.
  if (outcome.kind === 'refused' && target.apiVersion !== `${GROUP}/${VERSION}`) return undefined;
  return {
    metadata: { generateName: `${target.name}.` },
    involvedObject: {
      apiVersion: target.apiVersion,
      kind: target.kind,
      name: target.name,
      namespace: target.namespace,
      ...(target.uid ? { uid: target.uid } : {}),
    },
    reason:
      outcome.kind === 'stale'
        ? 'CommandStale'
        : outcome.kind === 'refused'
          ? 'CommandRefused'
          : 'CommandRejected',
    message: `${command.command}: ${describeOutcome(outcome)}`.slice(0, 1024),
    type: 'Warning',
    source: { component: 'rolepolicy-k8s-gateway' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}
