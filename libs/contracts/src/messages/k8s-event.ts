// Kubernetes Events from any service, in one line: `await recordEvent(publisher, ref, { type, reason,
// message, action, component }, { sender })`. The Event travels as a `record-event` command to the k8s-gateway,
// the only API writer, which creates or counts up the core/v1 Event. Best effort, like client-go's
// recorder: a failed publish is reported in the result, never thrown into the caller's work.
import { randomUUID } from 'node:crypto';
import { redactSecrets } from '../redact.js';
import { k8sCommandSubject, type K8sCommandSender } from '../subjects.js';
import type { JetStreamPublisher } from '../transport/publisher.js';
import { k8sCommandContract, type K8sCommandV1, type KubeEventBody } from './k8s-command.js';

/** The object an Event is about (namespaced; uid optional: the gateway fills it in). */
export type EventRegarding = Extract<K8sCommandV1, { command: 'record-event' }>['target'];

/** Longest message an Event keeps (the events.k8s.io limit); longer ones are cut with `…`. */
export const MAX_EVENT_MESSAGE = 1024;

/** How an Event's command is sent. */
export interface EventCommandOptions {
  /** Default: a fresh `event/<component>/<uuid>`. */
  readonly idempotencyKey?: string;
  /**
   * The sender's ordering (ADR 0016): an Event about an object created in the same pass must not be applied
   * before that object exists, so it takes the key of the pass's other commands. Default: the object's own
   * key (Events about one object keep their order; the Event they count up is per object).
   */
  readonly orderingKey?: string;
}

/** The command that records `event` about `regarding`; the message is redacted and bounded here. */
export function recordEventCommand(
  regarding: EventRegarding,
  event: KubeEventBody,
  options: EventCommandOptions = {},
): Extract<K8sCommandV1, { command: 'record-event' }> {
  const redacted = redactSecrets(event.message);
  const message =
    redacted.length <= MAX_EVENT_MESSAGE ? redacted : `${redacted.slice(0, MAX_EVENT_MESSAGE - 1)}…`;
  return {
    v: 1,
    command: 'record-event',
    target: regarding,
    event: { ...event, message },
    idempotencyKey: options.idempotencyKey ?? `event/${event.component}/${randomUUID()}`,
    orderingKey: options.orderingKey ?? `event/${regarding.namespace}/${regarding.kind}/${regarding.name}`,
  };
}

/**
 * Records a Kubernetes Event about `regarding` through the gateway. Resolves true once the command is
 * stored in the stream, false when it could not be published (the reason goes to `onError`).
 * @example await recordEvent(publisher, planRef, { type: 'Normal', reason: 'PlanApplied', message: 'applied 3 statements', action: 'Apply', component: 'rolepolicy-planner' }, { sender: 'planner' })
 */
export async function recordEvent(
  publisher: Pick<JetStreamPublisher, 'publish'>,
  regarding: EventRegarding,
  event: KubeEventBody,
  options: Pick<EventCommandOptions, 'orderingKey'> & {
    /** The service sending it: the command goes on that service's own subject (ADR 0022). */
    readonly sender: K8sCommandSender;
    readonly onError?: (error: Error) => void;
  },
): Promise<boolean> {
  const command = recordEventCommand(regarding, event, options);
  try {
    await publisher.publish(
      k8sCommandContract,
      k8sCommandSubject(options.sender, 'record-event'),
      command,
      command.idempotencyKey,
    );
    return true;
  } catch (error) {
    options.onError?.(error instanceof Error ? error : new Error(String(error)));
    return false;
  }
}
