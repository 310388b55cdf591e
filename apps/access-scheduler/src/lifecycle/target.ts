// What the ephemeral lifecycle reads from the target PostgresPolicy: identity, mode, suspension and the
// roles of its expanded graph (declared, profile-generated and external). Pure.
import type { PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/kube';
import { expandPolicy, type PolicyContent, type RoleFacts } from '@rolepolicy/policy';

/** Finalizer on a target PostgresPolicy while a request holds (or may hold) access on it. */
export const TARGET_FINALIZER = 'rolepolicy.io/ephemeral-access-target';

/** A role of the expanded target graph. */
export interface TargetRole {
  readonly external: boolean;
}

/** The target policy as the lifecycle sees it. */
export interface TargetView {
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  /** apply executes; observe and plan never do. */
  readonly applies: boolean;
  readonly suspended: boolean;
  /** Expanded roles by name, or why the policy does not expand. */
  readonly roles: ReadonlyMap<string, TargetRole> | { readonly invalid: string };
  /** `status.managed_database_identity`, the lock identity scoped plans carry (null until planned). */
  readonly managedDatabaseIdentity: string | null;
  readonly reconciliationMode: 'authoritative' | 'additive' | 'adopt';
  /** Declared attributes and memberships of the expanded roles, for the privileged-role check (ADR 0021). */
  readonly privilegeGraph?: readonly RoleFacts[];
  /** The policy carries the finalizer that keeps it until held access is revoked (ADR 0020). */
  readonly guarded: boolean;
}

/** Reads the target policy once per pass. */
export function targetView(policy: PostgresPolicy): TargetView {
  const expansion = expandPolicy(policy.spec as PolicyContent, { policyName: policy.metadata.name ?? '' });
  const roles: TargetView['roles'] = expansion.ok
    ? new Map(expansion.desired.roles.map((r) => [r.name, { external: r.external }]))
    : {
        invalid: expansion.errors
          .slice(0, 3)
          .map((e) => `${e.path}: ${e.message}`)
          .join('; '),
      };
  const privilegeGraph: RoleFacts[] = expansion.ok
    ? expansion.desired.roles.map(({ name, state }) => ({
        name,
        superuser: state.superuser,
        createrole: state.createrole,
        bypassrls: state.bypassrls,
        replication: state.replication,
        memberOf: expansion.desired.memberships.filter((m) => m.member === name).map((m) => m.role),
      }))
    : [];
  const mode = policy.spec.mode ?? 'apply';
  return {
    name: policy.metadata.name ?? '',
    uid: policy.metadata.uid ?? '',
    generation: policy.metadata.generation ?? 0,
    applies: mode === 'apply',
    suspended: policy.spec.suspend === true,
    roles,
    managedDatabaseIdentity: policy.status?.managed_database_identity ?? null,
    reconciliationMode: policy.spec.reconciliation_mode ?? 'authoritative',
    privilegeGraph,
    guarded: (policy.metadata.finalizers ?? []).includes(TARGET_FINALIZER),
  };
}

/** The role map, or undefined when the target does not expand. */
export function rolesOf(target: TargetView): ReadonlyMap<string, TargetRole> | undefined {
  return target.roles instanceof Map ? target.roles : undefined;
}

/**
 * The target facts a scoped plan carries: the target policy once it has a lock identity, or else (a revoke
 * after the target lost it or went away) the facts its activation plan recorded; null with neither.
 */
export function scopedPlanTarget(
  target: TargetView | null,
  activationPlan: PostgresPolicyPlan | undefined,
): TargetView | null {
  if (target !== null && target.managedDatabaseIdentity !== null) return target;
  if (activationPlan === undefined) return null;
  const spec = activationPlan.spec;
  return {
    name: spec.policyRef.name,
    uid: '',
    generation: spec.policyGeneration,
    applies: true,
    suspended: false,
    roles: new Map(),
    managedDatabaseIdentity: spec.managedDatabaseIdentity,
    reconciliationMode: spec.reconciliationMode,
    guarded: false,
  };
}
