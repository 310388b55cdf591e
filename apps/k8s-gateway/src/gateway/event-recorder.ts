// Records `record-event` commands as core/v1 Events, deduplicated the way client-go's EventCorrelator
// and the API conventions expect: the same involved object, type, reason, message and source is one
// Event whose `count` grows and whose `lastTimestamp` moves. The Event's name is derived from that key,
// so deduplication holds across gateway restarts and leader changes without an in-memory cache; the
// last command's idempotency key on the Event makes a redelivered command count once.
import { createHash } from 'node:crypto';
import { ApiException, HttpMethod, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import { redactSecrets, type K8sCommandV1 } from '@rolepolicy/contracts';
import { RawObjects } from './raw-objects.js';

type RecordEvent = Extract<K8sCommandV1, { command: 'record-event' }>;

/** Annotation holding the idempotency key of the last command counted on an Event. */
export const LAST_COMMAND_ANNOTATION = 'rolepolicy.io/last-event-command';

/** The deduplication key's Event name: `<object name>.<16 hex digits>` (at most 253 characters). */
export function eventName(command: RecordEvent, uid: string | undefined): string {
  const { target, event } = command;
  const key = JSON.stringify([
    target.apiVersion,
    target.kind,
    target.namespace,
    target.name,
    uid ?? '',
    event.type,
    event.reason,
    redactSecrets(event.message),
    event.component,
  ]);
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return `${target.name.slice(0, 236)}.${digest}`;
}

/** Thrown for a 409 so the caller's retry loop re-reads and counts again. */
export class EventConflict extends Error {}

/** Writes Events for one leader term. */
export class EventRecorder {
  private readonly objects: RawObjects;

  constructor(
    kc: KubeConfig,
    /** `reportingInstance`: the gateway replica (its Lease identity). */
    private readonly instance: string,
  ) {
    this.objects = new RawObjects(kc);
  }

  /** The involved object's uid: from the command, else read (kubectl describe selects Events by uid). */
  private async uidOf(target: RecordEvent['target']): Promise<string | undefined> {
    if (target.uid !== undefined) return target.uid;
    try {
      const object = await this.objects.read({
        apiVersion: target.apiVersion,
        kind: target.kind,
        metadata: { name: target.name, namespace: target.namespace },
      });
      return object.metadata?.uid;
    } catch (err) {
      if (err instanceof ApiException && Number(err.code) === 404) return undefined;
      throw err;
    }
  }

  /**
   * Creates the Event or counts it up; returns the written resourceVersion. Throws {@link EventConflict}
   * on 409 (a concurrent count or create: read again), ApiException for anything else.
   */
  async record(command: RecordEvent): Promise<string | undefined> {
    const { target, event } = command;
    const uid = await this.uidOf(target);
    const name = eventName(command, uid);
    const namespace = target.namespace;
    const events = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
    const now = new Date();
    try {
      // Most Events are new (one per step of a new plan): create first, and read only when it exists.
      const created = await this.objects.request<CoreV1Event>(HttpMethod.POST, events, {
        metadata: { name, namespace, annotations: { [LAST_COMMAND_ANNOTATION]: command.idempotencyKey } },
        involvedObject: {
          apiVersion: target.apiVersion,
          kind: target.kind,
          name: target.name,
          namespace,
          ...(uid !== undefined ? { uid } : {}),
        },
        type: event.type,
        reason: event.reason,
        message: redactSecrets(event.message),
        action: event.action,
        source: { component: event.component },
        reportingComponent: event.component,
        reportingInstance: this.instance,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      } satisfies CoreV1Event);
      return created.metadata?.resourceVersion;
    } catch (err) {
      // 409 AlreadyExists: the same Event again (count it) or this command redelivered (counted already).
      if (!(err instanceof ApiException && Number(err.code) === 409)) throw err;
    }
    let current: CoreV1Event;
    try {
      current = await this.objects.request<CoreV1Event>(
        HttpMethod.GET,
        `${events}/${encodeURIComponent(name)}`,
      );
    } catch (err) {
      // Gone between the create and the read (expired): the retry creates it.
      if (err instanceof ApiException && Number(err.code) === 404) throw new EventConflict();
      throw err;
    }
    if (current.metadata?.annotations?.[LAST_COMMAND_ANNOTATION] === command.idempotencyKey) {
      return current.metadata.resourceVersion; // a redelivered command: already counted
    }
    try {
      const replaced = await this.objects.request<CoreV1Event>(
        HttpMethod.PUT,
        `${events}/${encodeURIComponent(name)}`,
        {
          ...current,
          metadata: {
            ...current.metadata,
            annotations: {
              ...current.metadata?.annotations,
              [LAST_COMMAND_ANNOTATION]: command.idempotencyKey,
            },
          },
          count: (current.count ?? 1) + 1,
          lastTimestamp: now,
          reportingInstance: this.instance,
        } satisfies CoreV1Event,
      );
      return replaced.metadata?.resourceVersion;
    } catch (err) {
      if (err instanceof ApiException && Number(err.code) === 409) throw new EventConflict();
      throw err;
    }
  }
}
