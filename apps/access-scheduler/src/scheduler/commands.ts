// The scheduler's writes as k8s-gateway commands (pure): status patches bound to the object's uid and
// resourceVersion, scoped plan creation with its initial status, finalizers, and request deletion.
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import { API_VERSION, type Kind } from '@rolepolicy/kube';

type Json = Record<string, unknown>;

/** A command without its idempotency key (the sender adds a unique one). */
export type UnkeyedCommand = K8sCommandV1 extends infer C
  ? C extends { idempotencyKey: string }
    ? Omit<C, 'idempotencyKey'>
    : never
  : never;

/** Where a command goes. */
export interface Ref {
  readonly kind: Kind;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
}

/** The command target of a reference. */
export function refOf(ref: Ref): K8sCommandV1['target'] {
  return {
    apiVersion: API_VERSION,
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    ...(ref.uid === undefined ? {} : { uid: ref.uid }),
  };
}

/**
 * The merge patch that turns status `current` into `next`: every top-level field of `next`, and null for
 * each field only `current` has (a merge patch would otherwise keep it, e.g. a cleared lastError).
 */
export function replacingPatch(current: object | null | undefined, next: object): Json {
  const patch: Json = { ...(next as Json) };
  for (const key of Object.keys(current ?? {})) if (!(key in patch)) patch[key] = null;
  return patch;
}

/** A status write that the gateway refuses as stale when the object moved past `resourceVersion`. */
export function statusCommand(ref: Ref, status: Json, resourceVersion?: string): UnkeyedCommand {
  return {
    v: 1,
    command: 'patch-status',
    target: refOf(ref),
    status,
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
  };
}

/** Creates (or re-arms) a scoped plan and writes its initial status in the same ordered command. */
export function createPlanCommand(
  namespace: string,
  name: string,
  object: Json,
  status: Json,
): UnkeyedCommand {
  return {
    v: 1,
    command: 'apply-resource',
    target: refOf({ kind: 'PostgresPolicyPlan', namespace, name }),
    object,
    status,
  };
}

/** Adds or removes a finalizer. */
export function finalizerCommand(ref: Ref, finalizer: string, present: boolean): UnkeyedCommand {
  return { v: 1, command: 'set-finalizer', target: refOf(ref), finalizer, present };
}

/** Deletes an object (bound to its uid). */
export function deleteCommand(ref: Ref): UnkeyedCommand {
  return { v: 1, command: 'delete-resource', target: refOf(ref) };
}
