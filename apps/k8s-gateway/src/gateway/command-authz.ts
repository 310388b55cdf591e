// Which commands each sender may have the gateway write (ADR 0022), as pure checks: the sender comes from
// the subject, never from the payload. Refusal messages name kinds, fields and rules, never values.
import { GROUP, VERSION } from '@rolepolicy/kube';
import { NOTIFICATIONS_CONFIGMAP, scopedPlanName, type ScopeOperation } from '@rolepolicy/policy';
import type { K8sCommandSender, K8sCommandToken, K8sCommandV1 } from '@rolepolicy/contracts';
import {
  AUTO_APPROVER,
  executionGate,
  AUTO_APPROVED_REASON,
  type PostgresPolicySpec,
} from '@rolepolicy/plan-lifecycle';

type Json = { readonly [key: string]: unknown };

/** The rolepolicy.io API version every custom kind is written with. */
const API_VERSION = `${GROUP}/${VERSION}`;

/**
 * The access-scheduler's finalizers (apps/access-scheduler: REQUEST_FINALIZER, ACCESS_POLICY_FINALIZER,
 * TARGET_FINALIZER: a target PostgresPolicy stays until the access it holds is revoked, ADR 0020).
 */
export const SCHEDULER_FINALIZERS = {
  EphemeralAccessRequest: 'rolepolicy.io/ephemeral-access',
  EphemeralAccessPolicy: 'rolepolicy.io/ephemeral-access-policy',
  PostgresPolicy: 'rolepolicy.io/ephemeral-access-target',
} as const;

/**
 * The authorisation table: per sender and command, the target kinds it may name. Anything not listed is
 * refused. A new write (say, a finalizer on a PostgresPolicy) is one more kind here and, for finalizers,
 * one more entry in {@link FINALIZERS}.
 */
export const COMMAND_TABLE: Readonly<
  Record<K8sCommandSender, Readonly<Partial<Record<K8sCommandToken, readonly string[]>>>>
> = {
  // Plans it creates (durable and candidate plans), their SQL and review ConfigMaps, policy and candidate
  // status, retention deletes, and Events about those objects.
  planner: {
    'apply-resource': ['PostgresPolicyPlan', 'ConfigMap'],
    'patch-status': ['PostgresPolicy', 'PostgresPolicyCandidate', 'PostgresPolicyPlan'],
    'delete-resource': ['PostgresPolicyPlan', 'PostgresPolicyCandidate', 'ConfigMap'],
    'record-event': ['PostgresPolicy', 'PostgresPolicyCandidate', 'PostgresPolicyPlan'],
  },
  // Execution status of the plans it runs; generated Secrets go through rp.k8s.secret.generate, not here.
  executor: {
    'patch-status': ['PostgresPolicyPlan'],
  },
  // Request and access-policy status and finalizers, the target policy's finalizer while it holds access,
  // its scoped plans, deleting the requests of a deleted access policy and plans squatting its scoped plan
  // names (ADR 0020), and Events about those objects and about invalid notifications ConfigMaps (ADR 0025).
  'access-scheduler': {
    'apply-resource': ['PostgresPolicyPlan'],
    'patch-status': ['EphemeralAccessRequest', 'EphemeralAccessPolicy', 'PostgresPolicyPlan'],
    'set-finalizer': ['EphemeralAccessRequest', 'EphemeralAccessPolicy', 'PostgresPolicy'],
    'delete-resource': ['EphemeralAccessRequest', 'PostgresPolicyPlan'],
    'record-event': ['EphemeralAccessRequest', 'EphemeralAccessPolicy', 'PostgresPolicyPlan', 'ConfigMap'],
  },
};

/** Finalizers a sender may add or remove, per kind. */
export const FINALIZERS: Readonly<Record<K8sCommandSender, Readonly<Record<string, readonly string[]>>>> = {
  planner: {},
  executor: {},
  'access-scheduler': {
    EphemeralAccessRequest: [SCHEDULER_FINALIZERS.EphemeralAccessRequest],
    EphemeralAccessPolicy: [SCHEDULER_FINALIZERS.EphemeralAccessPolicy],
    PostgresPolicy: [SCHEDULER_FINALIZERS.PostgresPolicy],
  },
};

/** The status fields and phases the executor writes on a plan (plan-patches.ts: applying, applied, failed). */
const EXECUTOR_STATUS_FIELDS = ['phase', 'applyingSince', 'appliedAt', 'failedAt', 'lastError', 'conditions'];
const EXECUTOR_PHASES = ['Applying', 'Applied', 'Failed'];

/** Who controls a plan or ConfigMap: the kinds whose controller reference makes it the sender's. */
const PLANNER_PLAN_OWNERS = ['PostgresPolicy', 'PostgresPolicyCandidate'];
const SCHEDULER_PLAN_OWNERS = ['EphemeralAccessRequest'];
const CONFIGMAP_OWNERS = ['PostgresPolicy', 'PostgresPolicyCandidate', 'PostgresPolicyPlan'];
/** Names of the ConfigMaps the planner writes: `<plan>-sql` (plan-builder.ts) and `<plan>-review`. */
const CONFIGMAP_SUFFIXES = ['-sql', '-review'];

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The controller ownerReference of an object, when it has exactly one. */
export function controllerOf(object: unknown): Json | undefined {
  const meta = isObject(object) && isObject(object['metadata']) ? object['metadata'] : {};
  const refs = Array.isArray(meta['ownerReferences']) ? (meta['ownerReferences'] as unknown[]) : [];
  const controllers = refs.filter((r): r is Json => isObject(r) && r['controller'] === true);
  return controllers.length === 1 ? controllers[0] : undefined;
}

/** True when `object`'s controller is a rolepolicy.io object of one of `kinds`, named with its uid. */
function controlledBy(object: unknown, kinds: readonly string[]): boolean {
  const owner = controllerOf(object);
  return (
    owner !== undefined &&
    owner['apiVersion'] === API_VERSION &&
    typeof owner['kind'] === 'string' &&
    kinds.includes(owner['kind']) &&
    typeof owner['name'] === 'string' &&
    typeof owner['uid'] === 'string' &&
    owner['uid'].length > 0
  );
}

function specOf(object: unknown): Json {
  return isObject(object) && isObject(object['spec']) ? object['spec'] : {};
}

/** A scoped plan (ephemeral access, the access-scheduler's) rather than a durable or candidate plan. */
function isScoped(plan: unknown): boolean {
  const scope = specOf(plan)['scope'];
  return scope !== undefined && scope !== null;
}

/** Which plans a sender owns: the planner durable and candidate plans, the scheduler scoped ones. */
function ownsPlan(sender: K8sCommandSender, plan: unknown): boolean {
  if (sender === 'planner') return !isScoped(plan) && controlledBy(plan, PLANNER_PLAN_OWNERS);
  if (sender === 'access-scheduler') return isScoped(plan) && controlledBy(plan, SCHEDULER_PLAN_OWNERS);
  // The executor runs both kinds and writes execution status on either.
  return true;
}

const PLAN_OWNERSHIP: Readonly<Record<K8sCommandSender, string>> = {
  planner: 'a durable or candidate plan controlled by a PostgresPolicy or PostgresPolicyCandidate',
  'access-scheduler': 'a scoped plan (spec.scope) controlled by an EphemeralAccessRequest',
  executor: 'a plan',
};

/**
 * Why `sender` may not send `command` at all, from the command alone (kind, apiVersion, namespace,
 * fields), or undefined. `namespace`: the one namespace the gateway serves, when it serves only one.
 */
export function commandRefusal(
  sender: K8sCommandSender | undefined,
  command: K8sCommandV1,
  namespace?: string,
): string | undefined {
  const { target } = command;
  if (sender === undefined) return 'the subject names no service that sends commands';
  const kinds = COMMAND_TABLE[sender][command.command] ?? [];
  if (!kinds.includes(target.kind))
    return `the ${sender} may not send ${command.command} for ${target.kind} (ADR 0022)`;
  const apiVersion = target.kind === 'ConfigMap' ? 'v1' : API_VERSION;
  if (target.apiVersion !== apiVersion)
    return `${target.kind} is written as ${apiVersion}, not ${target.apiVersion}`;
  if (namespace !== undefined && target.namespace !== namespace)
    return `the gateway serves namespace ${namespace} only`;
  switch (command.command) {
    case 'apply-resource':
      return applyRefusal(sender, command);
    case 'patch-status':
      return sender === 'executor' ? executorStatusRefusal(command.status) : undefined;
    case 'set-finalizer': {
      const allowed = FINALIZERS[sender][target.kind] ?? [];
      return allowed.includes(command.finalizer)
        ? undefined
        : `the ${sender} may not set finalizer ${command.finalizer} on ${target.kind}`;
    }
    case 'delete-resource':
      return undefined;
    case 'record-event':
      return target.kind === 'ConfigMap' && target.name !== NOTIFICATIONS_CONFIGMAP
        ? `the ${sender} records Events only on ConfigMaps named ${NOTIFICATIONS_CONFIGMAP}`
        : undefined;
    default: {
      const never: never = command;
      return never;
    }
  }
}

function applyRefusal(
  sender: K8sCommandSender,
  command: Extract<K8sCommandV1, { command: 'apply-resource' }>,
): string | undefined {
  const { target, object } = command;
  if (command.createOnly === true) return `the ${sender} creates nothing create-only`;
  if (target.kind === 'ConfigMap') {
    if (command.status !== undefined) return 'a ConfigMap has no status';
    if (!CONFIGMAP_SUFFIXES.some((s) => target.name.endsWith(s)))
      return `a ConfigMap the ${sender} writes is named <plan>-sql or <plan>-review`;
    if (!controlledBy(object, CONFIGMAP_OWNERS))
      return `a ConfigMap the ${sender} writes is controlled (ownerReferences, with uid) by a rolepolicy.io ${CONFIGMAP_OWNERS.join(', ')}`;
    return undefined;
  }
  if (!ownsPlan(sender, object)) return `the ${sender} creates only ${PLAN_OWNERSHIP[sender]}`;
  return undefined;
}

function executorStatusRefusal(status: Json): string | undefined {
  const extra = Object.keys(status).filter((k) => !EXECUTOR_STATUS_FIELDS.includes(k));
  if (extra.length > 0) return `the executor may not write plan status ${extra.sort().join(', ')}`;
  const phase = status['phase'];
  if (phase !== undefined && !(typeof phase === 'string' && EXECUTOR_PHASES.includes(phase)))
    return `the executor writes plan phase ${EXECUTOR_PHASES.join(', ')} only`;
  return undefined;
}

/** What a write would change, as the applier sees it after reading the object. */
export type WriteView = {
  /** The object as the API has it now; undefined when it does not exist. */
  readonly current: Json | undefined;
  /** The object a create or replace writes (apply-resource). */
  readonly desired?: Json;
  /** The status after the write (patch-status merged onto the current one, apply-resource's status). */
  readonly nextStatus?: Json | undefined;
};

/** Reads an object the gateway's informers hold (the owning policy of an auto-approved plan). */
export type ObjectLookup = (kind: string, namespace: string, name: string) => Json | undefined;

/** A recorded decision in comparable form: Approved/Denied conditions that are True, and decidedBy. */
function decisionOf(status: unknown): string {
  const s = isObject(status) ? status : {};
  const conditions = Array.isArray(s['conditions']) ? (s['conditions'] as unknown[]) : [];
  const decided = (type: string) =>
    conditions.some((c) => isObject(c) && c['type'] === type && c['status'] === 'True');
  return JSON.stringify({
    approved: decided('Approved'),
    denied: decided('Denied'),
    decidedBy: s['decidedBy'] ?? null,
  });
}

const UNDECIDED = decisionOf(undefined);

/** The planner's own approval (approval: auto), as plan-builder.ts and plan-patches.ts write it. */
function isAutoApproval(status: Json): boolean {
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]) : [];
  const approved = conditions.find((c): c is Json => isObject(c) && c['type'] === 'Approved');
  return (
    decisionOf(status) === JSON.stringify({ approved: true, denied: false, decidedBy: AUTO_APPROVER }) &&
    approved?.['reason'] === AUTO_APPROVED_REASON
  );
}

/** True when `plan` is controlled by a PostgresPolicy whose spec lets the planner approve (apply + auto). */
function autoApprovable(plan: unknown, namespace: string, lookup: ObjectLookup): boolean {
  if (isScoped(plan)) return false;
  const owner = controllerOf(plan);
  if (owner?.['kind'] !== 'PostgresPolicy' || typeof owner['name'] !== 'string') return false;
  const policy = lookup('PostgresPolicy', namespace, owner['name']);
  const meta = isObject(policy) && isObject(policy['metadata']) ? policy['metadata'] : {};
  if (policy === undefined || meta['uid'] !== owner['uid']) return false;
  // Cast: the stored spec was validated by the API server against the CRD schema this type comes from.
  return executionGate(specOf(policy) as unknown as PostgresPolicySpec) === 'auto';
}

const SCOPED_NAME = /^(.+)-[a-z0-9]{1,8}-(activate|revoke)-[0-9a-f]{12}$/;

/**
 * True when `plan` holds the name of one of an existing request's scoped plans (for its recorded bundle)
 * without being the scheduler's: the access-scheduler deletes such a squatter instead of obeying it (ADR
 * 0020). Names are recomputed from the request the gateway's informers hold, so no other plan qualifies.
 */
function squatsScopedName(
  sender: K8sCommandSender,
  plan: Json,
  namespace: string,
  lookup: ObjectLookup,
): boolean {
  if (sender !== 'access-scheduler') return false;
  const meta = isObject(plan['metadata']) ? plan['metadata'] : {};
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  const match = SCOPED_NAME.exec(name);
  if (match === null) return false;
  const request = lookup('EphemeralAccessRequest', namespace, match[1]!);
  const requestMeta = isObject(request) && isObject(request['metadata']) ? request['metadata'] : {};
  const status = isObject(request) && isObject(request['status']) ? request['status'] : {};
  const resolved = isObject(status['resolvedAccess']) ? status['resolvedAccess'] : {};
  const uid = requestMeta['uid'];
  const hash = resolved['bundleHash'];
  if (typeof uid !== 'string' || typeof hash !== 'string') return false;
  const operation: ScopeOperation = match[2] === 'activate' ? 'Activate' : 'Revoke';
  return scopedPlanName({ name: match[1]!, uid }, operation, hash) === name;
}

/**
 * Why the write may not go ahead on the object as it is, or undefined. Ownership: a sender changes only the
 * plans and ConfigMaps it owns. Decisions: nobody changes a recorded decision or records one, except the
 * planner's own approval of a plan whose policy says `approval: auto` (in apply mode), which names itself
 * (decidedBy `system:rolepolicy-planner(auto-approval)`, reason AutoApproved).
 */
export function writeRefusal(
  sender: K8sCommandSender,
  command: K8sCommandV1,
  view: WriteView,
  lookup: ObjectLookup,
): string | undefined {
  const { target } = command;
  const { current } = view;
  if (target.kind === 'ConfigMap') {
    if (current !== undefined && !controlledBy(current, CONFIGMAP_OWNERS))
      return `ConfigMap ${target.namespace}/${target.name} is not controlled by a rolepolicy.io object`;
    return undefined;
  }
  if (
    target.kind === 'PostgresPolicyPlan' &&
    current !== undefined &&
    !ownsPlan(sender, current) &&
    !(command.command === 'delete-resource' && squatsScopedName(sender, current, target.namespace, lookup))
  )
    return `the ${sender} writes only ${PLAN_OWNERSHIP[sender]}`;
  if (!('nextStatus' in view)) return undefined;
  const before = decisionOf(current?.['status']);
  const after = decisionOf(view.nextStatus);
  if (before === after) return undefined;
  const plan = view.desired ?? current;
  if (
    sender === 'planner' &&
    target.kind === 'PostgresPolicyPlan' &&
    before === UNDECIDED &&
    isObject(view.nextStatus) &&
    isAutoApproval(view.nextStatus) &&
    autoApprovable(plan, target.namespace, lookup)
  )
    return undefined;
  return `the ${sender} may not record or change a decision (Approved, Denied, decidedBy) on ${target.kind}; people decide, and the planner approves only plans of policies with approval: auto`;
}
