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
export const K8S_COMMANDS = [
  'patch-status',
  'apply-resource',
  'delete-resource',
  'record-event',
  'set-finalizer',
] as const;

/** One of {@link K8S_COMMANDS}. */
export type K8sCommandToken = (typeof K8S_COMMANDS)[number];

/**
 * Services that send commands to the k8s-gateway, each on its own subject `rp.k8s.cmd.<sender>.<command>`:
 * NATS lets each service's user publish only its own, so the gateway knows the sender from the subject and
 * authorises the command for that sender (ADR 0022).
 */
export const K8S_COMMAND_SENDERS = ['planner', 'executor', 'access-scheduler'] as const;

/** One of {@link K8S_COMMAND_SENDERS}. */
export type K8sCommandSender = (typeof K8S_COMMAND_SENDERS)[number];

/** Fixed subjects and wildcard patterns of the messaging spine. */
export const SUBJECTS = {
  /** Every resource event: `rp.resource.<kind>.<namespace>.<name>`, and the resync markers. */
  resourceAll: 'rp.resource.>',
  /**
   * Whether decisions are authenticated by the reference admission policy (ADR 0026): one subject on the
   * resource stream, outside every kind's (`_` never starts a kind token).
   */
  decisionAdmission: 'rp.resource._admission.decisions',
  /** Resync markers: `rp.resource.<kind>._resync.<chunk>` (ADR 0005). */
  resyncMarkerAll: 'rp.resource.*._resync.*',
  /** Ask the leading k8s-gateway for fresh resync markers (core NATS request/reply, ADR 0005). */
  resyncRequest: 'rp.k8s.resync',
  /** Every command to the k8s-gateway: `rp.k8s.cmd.<sender>.<command>` (ADR 0022). */
  k8sCommandAll: 'rp.k8s.cmd.>',
  /** Planner asks the inspector for a catalog snapshot (core NATS request/reply). */
  inspectRequest: 'rp.inspect.request',
  /**
   * The executor's read of a policy's managed scope right after a commit, for the planner's verification
   * (core NATS publish, never captured by a stream: it carries a catalog fingerprint; ADR 0017).
   */
  appliedSnapshot: 'rp.applied.snapshot',
  /** Approved plan execution work (JetStream work queue). */
  executeRequest: 'rp.execute.request',
  /** What the executor did with a request: Applying, Applied, Failed or Superseded (JetStream). */
  executeResult: 'rp.execute.result',
  /** Ephemeral access plans (scope Activate/Revoke) for the executor (JetStream work queue, ADR 0008). */
  scopedExecuteRequest: 'rp.execute.scoped.request',
  /**
   * Revocations of ephemeral access (scope Revoke) for the executor: their own durable, so a revoke never
   * waits behind activations (JetStream work queue, ADR 0013).
   */
  scopedRevokeRequest: 'rp.execute.scoped.revoke',
  /** What the executor did with a scoped plan, for the access-scheduler (JetStream). */
  scopedExecuteResult: 'rp.execute.scoped.result',
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

/**
 * Encodes any string as one subject token, reversibly ({@link decodeSubjectToken}). Kubernetes names may
 * hold dots (`app.prod`, `owner.cluster.credentials.postgresql.example.com`, up to 253 characters), and
 * a dot separates subject tokens, so names cannot travel raw. Letters, digits and `-` stay as they are
 * (so names stay readable), `.` becomes `~`, every other UTF-16 code unit becomes `%HH` (below 0x80) or
 * `%uHHHH`, and the empty string becomes `%`. The token never contains `.`, `*`, `>` or whitespace, and
 * never starts with `_` (tokens starting with `_` are reserved for markers such as a resync).
 * @example encodeSubjectToken('app.prod') // 'app~prod'
 */
export function encodeSubjectToken(value: string): string {
  if (value.length === 0) return '%';
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charAt(i);
    if (/^[A-Za-z0-9-]$/.test(c)) out += c;
    else if (c === '.') out += '~';
    else {
      const code = value.charCodeAt(i);
      out +=
        code < 0x80
          ? `%${code.toString(16).toUpperCase().padStart(2, '0')}`
          : `%u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    }
  }
  return out;
}

/**
 * The string {@link encodeSubjectToken} encoded as `token`, or undefined when `token` is not exactly what
 * the encoder produces for some string (one name has one subject, so "last message per subject" holds).
 * @example decodeSubjectToken('app~prod') // 'app.prod'
 */
export function decodeSubjectToken(token: string): string | undefined {
  if (token === '%') return '';
  if (token.length === 0) return undefined;
  let out = '';
  for (let i = 0; i < token.length;) {
    const c = token.charAt(i);
    if (/^[A-Za-z0-9-]$/.test(c)) {
      out += c;
      i += 1;
    } else if (c === '~') {
      out += '.';
      i += 1;
    } else if (c === '%' && token.charAt(i + 1) === 'u' && /^[0-9A-F]{4}$/.test(token.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(token.slice(i + 2, i + 6), 16));
      i += 6;
    } else if (c === '%' && /^[0-7][0-9A-F]$/.test(token.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(token.slice(i + 1, i + 3), 16));
      i += 3;
    } else return undefined;
  }
  return encodeSubjectToken(out) === token ? out : undefined;
}

/**
 * Subject of a resource event; namespace and name are encoded with {@link encodeSubjectToken}, so every
 * valid Kubernetes name travels. `root` is `rp` except in test sandboxes.
 * @example resourceSubject('postgrespolicy', 'team-a', 'orders') // 'rp.resource.postgrespolicy.team-a.orders'
 * @example resourceSubject('secret', 'team-a', 'app.prod') // 'rp.resource.secret.team-a.app~prod'
 */
export function resourceSubject(
  kind: ResourceKindToken,
  namespace: string,
  name: string,
  root: string = SUBJECT_ROOT,
): string {
  return `${root}.resource.${kind}.${encodeSubjectToken(namespace)}.${encodeSubjectToken(name)}`;
}

/** Kind, namespace and name of a resource event subject (decoded). */
export type ResourceSubjectParts = {
  readonly kind: ResourceKindToken;
  readonly namespace: string;
  readonly name: string;
};

/**
 * The kind, namespace and name a {@link resourceSubject} carries, or undefined for any other subject
 * (another root, an unknown kind, a reserved `_` token such as a resync marker, a malformed encoding).
 * The only place that decodes resource subjects.
 * @example parseResourceSubject('rp.resource.secret.team-a.app~prod') // { kind: 'secret', namespace: 'team-a', name: 'app.prod' }
 */
export function parseResourceSubject(
  subject: string,
  root: string = SUBJECT_ROOT,
): ResourceSubjectParts | undefined {
  const prefix = `${root}.resource.`;
  if (!subject.startsWith(prefix)) return undefined;
  const rest = subject.slice(prefix.length).split('.');
  if (rest.length !== 3) return undefined;
  const [kind, ns, nm] = rest as [string, string, string];
  if (!(RESOURCE_KINDS as readonly string[]).includes(kind)) return undefined;
  const namespace = decodeSubjectToken(ns);
  const name = decodeSubjectToken(nm);
  if (namespace === undefined || name === undefined) return undefined;
  return { kind: kind as ResourceKindToken, namespace, name };
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
export function resourceKindPattern(kind: ResourceKindToken, root: string = SUBJECT_ROOT): string {
  return `${root}.resource.${kind}.*.*`;
}

/**
 * Subject of a command `sender` sends to the k8s-gateway; `root` is `rp` except in test sandboxes.
 * @example k8sCommandSubject('planner', 'patch-status') // 'rp.k8s.cmd.planner.patch-status'
 */
export function k8sCommandSubject(
  sender: K8sCommandSender,
  command: K8sCommandToken,
  root: string = SUBJECT_ROOT,
): string {
  return `${root}.k8s.cmd.${sender}.${command}`;
}

/** The commands one sender may publish: `rp.k8s.cmd.<sender>.>` (its NATS user's publish grant). */
export function k8sCommandSenderPattern(sender: K8sCommandSender, root: string = SUBJECT_ROOT): string {
  return `${root}.k8s.cmd.${sender}.>`;
}

/**
 * The sender a command subject names, or undefined when the subject is not `<root>.k8s.cmd.<sender>.<command>`
 * with a known sender and command (such a command is refused: nobody may send it).
 * @example k8sCommandSender('rp.k8s.cmd.executor.patch-status') // 'executor'
 */
export function k8sCommandSender(subject: string, root: string = SUBJECT_ROOT): K8sCommandSender | undefined {
  const prefix = `${root}.k8s.cmd.`;
  if (!subject.startsWith(prefix)) return undefined;
  const rest = subject.slice(prefix.length).split('.');
  if (rest.length !== 2) return undefined;
  const [sender, command] = rest as [string, string];
  if (!(K8S_COMMANDS as readonly string[]).includes(command)) return undefined;
  return (K8S_COMMAND_SENDERS as readonly string[]).includes(sender)
    ? (sender as K8sCommandSender)
    : undefined;
}

/**
 * Dead-letter subject for a message that arrived on `subject`; the original subject is kept as the
 * suffix so an operator can filter dead letters by origin.
 */
export function deadLetterSubject(subject: string, root: string = SUBJECT_ROOT): string {
  return `${root}.deadletter.${subject}`;
}

/**
 * The original subject a {@link deadLetterSubject} was built from, or undefined for any other subject.
 * @example deadLetterOrigin('rp.deadletter.rp.execute.request') // 'rp.execute.request'
 */
export function deadLetterOrigin(subject: string, root: string = SUBJECT_ROOT): string | undefined {
  const prefix = `${root}.deadletter.`;
  return subject.startsWith(prefix) && subject.length > prefix.length
    ? subject.slice(prefix.length)
    : undefined;
}
