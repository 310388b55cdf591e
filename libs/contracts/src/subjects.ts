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
  /** Every resource event: `rp.resource.<kind>.<namespace>.<name>`. */
  resourceAll: 'rp.resource.>',
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
  /**
   * A service reads Secret values from the k8s-gateway (core NATS request/reply, sealed reply). Never
   * captured by a stream: values must not rest in NATS.
   */
  secretRead: 'rp.k8s.secret.read',
  /** The planner asks the k8s-gateway to create a generated-password Secret (core NATS request/reply). */
  secretGenerate: 'rp.k8s.secret.generate',
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
