// Lifecycle steps as k8s-gateway commands (pure). Every command about a policy carries the policy's
// ordering key, so the gateway applies them one at a time in publication order, which keeps the decision's
// order (ConfigMap, plan with status, supersede, policy status), while other policies' commands go side by side.
import { policyOrderingKey, type K8sCommandV1 } from '@rolepolicy/contracts';
import {
  API_VERSION,
  toKubePlan,
  toKubePlanStatus,
  toKubePolicyStatus,
  type ConfigMap,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicyStatus,
  type ReconcileStep,
} from '@rolepolicy/plan-lifecycle';

type ObjectRef = K8sCommandV1['target'];
type Json = Record<string, unknown>;

function planRef(namespace: string, name: string): ObjectRef {
  return { apiVersion: API_VERSION, kind: 'PostgresPolicyPlan', namespace, name };
}

function configMapRef(namespace: string, name: string): ObjectRef {
  return { apiVersion: 'v1', kind: 'ConfigMap', namespace, name };
}

/**
 * The merge patch that turns `current` into `next`: every top-level field of `next`, and null for each
 * field only `current` has (a merge patch would otherwise keep it, e.g. a cleared `current_plan_ref`).
 */
export function replacingPatch(current: object | null | undefined, next: object): Json {
  const patch: Json = { ...(next as Json) };
  for (const key of Object.keys(current ?? {})) if (!(key in patch)) patch[key] = null;
  return patch;
}

/** A command without its idempotency key (the caller adds a unique one). */
export type UnkeyedCommand = K8sCommandV1 extends infer C
  ? C extends { idempotencyKey: string }
    ? Omit<C, 'idempotencyKey'>
    : never
  : never;

/** `command` in the ordering of `policy`'s commands. */
export function orderedBy(policy: PostgresPolicy, command: UnkeyedCommand): UnkeyedCommand {
  return { ...command, orderingKey: policyOrderingKey(policy.metadata.namespace, policy.metadata.name) };
}

/** The commands of one step, in order, in the policy's ordering; `requestExecution` has none. */
export function commandsOf(step: ReconcileStep, policy: PostgresPolicy): readonly UnkeyedCommand[] {
  return stepCommands(step, policy).map((command) => orderedBy(policy, command));
}

function stepCommands(step: ReconcileStep, policy: PostgresPolicy): readonly UnkeyedCommand[] {
  const namespace = policy.metadata.namespace;
  switch (step.kind) {
    case 'createPlan': {
      const out: UnkeyedCommand[] = [];
      if (step.configMap !== null) out.push(createConfigMap(step.configMap));
      out.push(createPlan(step.plan));
      return out;
    }
    case 'patchPlanStatus':
      return [
        {
          v: 1,
          command: 'patch-status',
          target: planRef(namespace, step.patch.name),
          status: toKubePlanStatus(step.patch.status) as Json,
        },
      ];
    case 'writePolicyStatus':
      return [policyStatusCommand(policy, step.status)];
    case 'deletePlan': {
      const out: UnkeyedCommand[] = [
        { v: 1, command: 'delete-resource', target: planRef(namespace, step.planName) },
      ];
      if (step.configMapName !== null) {
        out.push({ v: 1, command: 'delete-resource', target: configMapRef(namespace, step.configMapName) });
      }
      return out;
    }
    case 'requestExecution':
      return [];
    default: {
      const unreachable: never = step;
      return unreachable;
    }
  }
}

/** The status write of a policy, bound to its uid so a recreated same-name policy is never touched. */
export function policyStatusCommand(policy: PostgresPolicy, status: PostgresPolicyStatus): UnkeyedCommand {
  return orderedBy(policy, {
    v: 1,
    command: 'patch-status',
    target: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicy',
      namespace: policy.metadata.namespace,
      name: policy.metadata.name,
      uid: policy.metadata.uid,
    },
    status: replacingPatch(policy.status, toKubePolicyStatus(status) as object),
  });
}

function createConfigMap(configMap: ConfigMap): UnkeyedCommand {
  const { metadata } = configMap;
  return {
    v: 1,
    command: 'apply-resource',
    target: configMapRef(metadata.namespace, metadata.name),
    // A spread copy is a plain object type, which TypeScript lets stand for a JSON object.
    object: { ...configMap },
  };
}

function createPlan(plan: PostgresPolicyPlan): UnkeyedCommand {
  const { status, ...object } = toKubePlan(plan);
  return {
    v: 1,
    command: 'apply-resource',
    target: planRef(plan.metadata.namespace, plan.metadata.name),
    object,
    ...(status ? { status: { ...status } } : {}),
  };
}
