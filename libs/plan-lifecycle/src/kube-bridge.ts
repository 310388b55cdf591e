// Converts between the CRD-generated types of @rolepolicy/kube and the lifecycle's local shapes. The
// conversions type-check structurally, so a drift between the CRDs and what the planner writes fails tsc.

import type * as Kube from '@rolepolicy/kube';
import type { ChangeSummary } from '@rolepolicy/policy';
import {
  API_VERSION,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicyPlanStatus,
} from './resources.js';

/** `T` with every `readonly` removed, recursively (the generated types use mutable arrays). */
export type DeepMutable<T> = T extends readonly (infer U)[]
  ? DeepMutable<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: DeepMutable<T[K]> }
    : T;

type PartialSummary = Partial<ChangeSummary>;

/** Counters the API server defaults to 0 may be absent on a read object; the lifecycle wants them all. */
export function fullSummary(partial: PartialSummary): ChangeSummary {
  return {
    default_privileges_revoked: partial.default_privileges_revoked ?? 0,
    default_privileges_set: partial.default_privileges_set ?? 0,
    grants_added: partial.grants_added ?? 0,
    grants_revoked: partial.grants_revoked ?? 0,
    members_added: partial.members_added ?? 0,
    members_removed: partial.members_removed ?? 0,
    passwords_set: partial.passwords_set ?? 0,
    roles_altered: partial.roles_altered ?? 0,
    roles_created: partial.roles_created ?? 0,
    roles_dropped: partial.roles_dropped ?? 0,
    schema_owners_altered: partial.schema_owners_altered ?? 0,
    schemas_created: partial.schemas_created ?? 0,
    sessions_terminated: partial.sessions_terminated ?? 0,
    total: partial.total ?? 0,
  };
}

function summaryOrNull(s: PartialSummary | null | undefined): ChangeSummary | null | undefined {
  return s === null || s === undefined ? s : fullSummary(s);
}

/**
 * A policy as read from the cluster, or null when it lacks what a stored object always has (name,
 * namespace, uid, generation): such an object cannot own plans and is not reconciled.
 */
export function fromKubePolicy(object: Kube.PostgresPolicy): PostgresPolicy | null {
  const { name, namespace, uid, generation } = object.metadata;
  if (!name || !namespace || !uid || generation === undefined) return null;
  const status = object.status ?? undefined;
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    metadata: { ...object.metadata, name, namespace, uid, generation },
    spec: object.spec,
    ...(status ? { status: { ...status, change_summary: summaryOrNull(status.change_summary) } } : {}),
  };
}

/** A plan as read from the cluster, or null without name and namespace. */
export function fromKubePlan(object: Kube.PostgresPolicyPlan): PostgresPolicyPlan | null {
  const { name, namespace } = object.metadata;
  if (!name || !namespace) return null;
  const status = object.status ?? undefined;
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicyPlan',
    metadata: { ...object.metadata, name, namespace },
    spec: object.spec,
    ...(status ? { status: { ...status, changeSummary: summaryOrNull(status.changeSummary) } } : {}),
  };
}

function mutableCopy<T>(value: T): DeepMutable<T> {
  return structuredClone(value) as DeepMutable<T>;
}

/**
 * `convert`, remembered per object: the resource cache replaces an object on every change and never
 * mutates one, so a conversion is valid for as long as the object lives. Every pass reads every peer
 * policy and every plan of its namespace; converting them again each time was a fifth of the planner's CPU
 * with 500 policies.
 */
function memoized<T extends object, R>(convert: (object: T) => R): (object: T) => R {
  const known = new WeakMap<T, { result: R }>();
  return (object) => {
    let entry = known.get(object);
    if (entry === undefined) {
      entry = { result: convert(object) };
      known.set(object, entry);
    }
    return entry.result;
  };
}

/** {@link fromKubePolicy} of a cached object (the same result for the same object). */
export const cachedPolicy = memoized(fromKubePolicy);

/** {@link fromKubePlan} of a cached object (the same result for the same object). */
export const cachedPlan = memoized(fromKubePlan);

/** The plan the planner built, as the generated type the gateway sends to the API server. */
export function toKubePlan(plan: PostgresPolicyPlan): Kube.PostgresPolicyPlan {
  const copy = mutableCopy(plan);
  return { ...copy, apiVersion: API_VERSION, kind: 'PostgresPolicyPlan' };
}

/** A plan status patch, as the generated status type. */
export function toKubePlanStatus(status: PostgresPolicyPlanStatus): Kube.PostgresPolicyPlanStatus {
  return mutableCopy(status);
}

/** A policy status, as the generated status type. */
export function toKubePolicyStatus(status: NonNullable<PostgresPolicy['status']>): Kube.PostgresPolicyStatus {
  return mutableCopy(status);
}
