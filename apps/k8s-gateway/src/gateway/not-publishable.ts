// What the gateway says on an object it cannot publish (today: an event larger than the NATS server's
// max_payload), so the owner sees why nothing reconciles it instead of silence. Pure: the gateway writes it.

type Json = { readonly [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Condition reason on an object the gateway could not publish. */
export const NOT_PUBLISHABLE_REASON = 'NotPublishable';

/** Kinds whose conditions use camelCase `lastTransitionTime` (the access condition shape of the spec). */
const ACCESS_KINDS: readonly string[] = ['EphemeralAccessPolicy', 'EphemeralAccessRequest'];

/** Spec limits on condition lists: 8 for access requests, 16 otherwise. */
function maxConditions(kind: string): number {
  return kind === 'EphemeralAccessRequest' ? 8 : 16;
}

/** True when `error` is nats.js refusing a message larger than the server's `max_payload`. */
export function isPayloadTooLarge(error: unknown): boolean {
  return error instanceof Error && /max_payload/i.test(error.message);
}

/** The message of the condition; names the sizes, never the contents. */
export function notPublishableMessage(bytes: number, maxPayload: number | undefined): string {
  const limit =
    maxPayload === undefined ? 'the NATS server max_payload' : `max_payload (${maxPayload} bytes)`;
  return `the k8s-gateway cannot publish this object: its resource event is ${bytes} bytes, more than ${limit}; make the object smaller or raise max_payload on the NATS server`;
}

/**
 * The `status.conditions` to write on `object` so it says it was not published (`Ready=False`, reason
 * `NotPublishable`), or undefined when it says so already. Other condition types are kept. `Ready` is
 * the one type every rolepolicy.io kind may carry (access requests allow only their lifecycle types).
 */
export function notPublishableConditions(
  kind: string,
  object: unknown,
  message: string,
  now: string,
): readonly Json[] | undefined {
  const status = isObject(object) && isObject(object['status']) ? object['status'] : {};
  const previous = Array.isArray(status['conditions']) ? status['conditions'].filter(isObject) : [];
  const ready = previous.find((c) => c['type'] === 'Ready');
  // Compared on status and reason only: the message names a size that the status write itself changes.
  if (ready?.['status'] === 'False' && ready['reason'] === NOT_PUBLISHABLE_REASON) return undefined;
  const time = ACCESS_KINDS.includes(kind) ? 'lastTransitionTime' : 'last_transition_time';
  const transition = ready?.['status'] === 'False' && typeof ready[time] === 'string' ? ready[time] : now;
  const condition = {
    type: 'Ready',
    status: 'False',
    reason: NOT_PUBLISHABLE_REASON,
    message,
    [time]: transition,
  };
  const others = previous.filter((c) => c['type'] !== 'Ready');
  return [condition, ...others].slice(0, maxConditions(kind));
}
