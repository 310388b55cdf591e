// Every NATS subject the services use, named so that a subject reads as a sentence.
// Build concrete subjects with these helpers; never concatenate subject strings elsewhere.

/** Root token of every rolepolicy subject. */
export const SUBJECT_ROOT = 'rp';

/** Resource kinds the k8s-gateway publishes, as the lower-case token used in subjects. */
export const RESOURCE_KINDS = [
  'postgrespolicy',
  'postgrespolicycandidate',
  'postgrespolicyplan',
  'ephemeralaccesspolicy',
  'ephemeralaccessrequest',
  'secret',
  'configmap',
] as const;

/** One of {@link RESOURCE_KINDS}. */
export type ResourceKindToken = (typeof RESOURCE_KINDS)[number];

/** Commands other services send to the k8s-gateway, the only writer to the Kubernetes API. */
export const K8S_COMMANDS = ['patch-status', 'apply-resource', 'delete-resource'] as const;

/** One of {@link K8S_COMMANDS}. */
export type K8sCommandToken = (typeof K8S_COMMANDS)[number];

/** Fixed subjects and wildcard patterns of the messaging spine. */
export const SUBJECTS = {
  /** Every resource event: `rp.resource.<kind>.<namespace>.<name>`, and the resync markers. */
  resourceAll: 'rp.resource.>',
  /** Resync markers: `rp.resource.<kind>._resync.<chunk>` (ADR 0005). */
  resyncMarkerAll: 'rp.resource.*._resync.*',
  /** Ask the leading k8s-gateway for fresh resync markers (core NATS request/reply, ADR 0005). */
  resyncRequest: 'rp.k8s.resync',
  /** Every command to the k8s-gateway: `rp.k8s.cmd.<command>`. */
  k8sCommandAll: 'rp.k8s.cmd.>',
  /** Planner asks the inspector for a catalog snapshot (core NATS request/reply). */
  inspectRequest: 'rp.inspect.request',
  /** Approved plan execution work (JetStream work queue). */
  executeRequest: 'rp.execute.request',
  /** What the executor did with a request: Applying, Applied, Failed or Superseded (JetStream). */
  executeResult: 'rp.execute.result',
  /** Every execution-related subject. */
  executeAll: 'rp.execute.>',
  /** Every dead letter: `rp.deadletter.<original subject>`. */
  deadLetterAll: 'rp.deadletter.>',
} as const;

/** Kubernetes names and namespaces never contain dots or wildcards, but be strict anyway. */
function token(value: string, what: string): string {
  if (value.length === 0 || /[.*>\s]/.test(value)) {
    throw new Error(`${what} "${value}" cannot be used as a subject token`);
  }
  return value;
}

/**
 * Subject of a resource event.
 * @example resourceSubject('postgrespolicy', 'team-a', 'orders') // 'rp.resource.postgrespolicy.team-a.orders'
 */
export function resourceSubject(kind: ResourceKindToken, namespace: string, name: string): string {
  return `${SUBJECT_ROOT}.resource.${kind}.${token(namespace, 'namespace')}.${token(name, 'name')}`;
}

/**
 * Token in the namespace position of a resync marker subject. No namespace token starts with `_`
 * (DNS-1123 labels never do, nor does the subject encoding of names), so markers never collide with objects.
 */
export const RESYNC_TOKEN = '_resync';

/**
 * Subject of chunk `chunk` of a kind's resync marker.
 * @example resyncMarkerSubject('secret', 0) // 'rp.resource.secret._resync.0'
 */
export function resyncMarkerSubject(
  kind: ResourceKindToken,
  chunk: number,
  root: string = SUBJECT_ROOT,
): string {
  if (!Number.isInteger(chunk) || chunk < 0) throw new Error(`resync chunk ${chunk} is not a whole number`);
  return `${root}.resource.${kind}.${RESYNC_TOKEN}.${chunk}`;
}

/** Wildcard pattern for every event of one resource kind. */
export function resourceKindPattern(kind: ResourceKindToken): string {
  return `${SUBJECT_ROOT}.resource.${kind}.*.*`;
}

/** Subject of a command to the k8s-gateway, e.g. `rp.k8s.cmd.patch-status`. */
export function k8sCommandSubject(command: K8sCommandToken): string {
  return `${SUBJECT_ROOT}.k8s.cmd.${command}`;
}

/**
 * Dead-letter subject for a message that arrived on `subject`; the original subject is kept as the
 * suffix so an operator can filter dead letters by origin.
 */
export function deadLetterSubject(subject: string, root: string = SUBJECT_ROOT): string {
  return `${root}.deadletter.${subject}`;
}
