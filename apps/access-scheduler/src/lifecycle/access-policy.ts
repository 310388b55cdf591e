// The EphemeralAccessPolicy controller's decision (pure): validation into Accepted / ResolvedRefs with the
// reasons of the operator notes (4.1), Suspended, RoleRetirementBlocked, resolvedRoles, observedGeneration.
import type { AccessCondition, EphemeralAccessPolicy, EphemeralAccessPolicyStatus } from '@rolepolicy/kube';
import {
  NO_PRIVILEGED_NAMESPACES,
  compareCodePoints,
  parseEphemeralDuration,
  privilegedRefusal,
  privilegedRoles,
  type PrivilegedNamespaces,
} from '@rolepolicy/policy';
import { stampCondition } from './conditions.js';
import { rolesOf, type TargetView } from './target.js';

/** Cluster ceilings (env EPHEMERAL_ACCESS_MAXIMUM_DURATION and EPHEMERAL_ACCESS_MAX_PENDING_TTL). */
export interface ClusterLimits {
  readonly maximumDurationSeconds: number;
  readonly maxPendingTtlSeconds: number;
  /** Namespaces whose access policies may opt in to privileged roles (EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES). */
  readonly privilegedNamespaces?: PrivilegedNamespaces;
}

/** The spec's default `pendingRequestTTL`. */
export const DEFAULT_PENDING_TTL = '15m';

/** Why an access policy is not accepted, as the reason of `Accepted=False`. */
export type RejectionReason =
  | 'InvalidDuration'
  | 'DurationExceedsClusterMaximum'
  | 'EmptyBundle'
  | 'TargetNotFound'
  | 'TargetInvalid'
  | 'TargetNotApplyMode'
  | 'RoleNotFound'
  | 'ExternalTargetRole'
  | 'DuplicateMembership'
  | 'PrivilegedRole';

/** A failed check. */
export interface Rejection {
  readonly reason: RejectionReason;
  readonly message: string;
}

/** The policy's durations in seconds once they validate. */
export interface AccessPolicyTerms {
  readonly maximumSeconds: number;
  readonly defaultSeconds: number | null;
  readonly pendingTtlSeconds: number;
  /** Bundle roles, sorted, unique. */
  readonly roles: readonly string[];
}

/** The validation verdict: accepted terms, or the first duration problem and the first reference problem. */
export type AccessPolicyVerdict =
  | { readonly ok: true; readonly terms: AccessPolicyTerms }
  | { readonly ok: false; readonly durations: Rejection | null; readonly refs: Rejection | null };

function durationChecks(
  spec: EphemeralAccessPolicy['spec'],
  limits: ClusterLimits,
): Rejection | Omit<AccessPolicyTerms, 'roles'> {
  const maximum = parseEphemeralDuration(spec.maximumDuration);
  if (!maximum.ok) return { reason: 'InvalidDuration', message: `spec.maximumDuration ${maximum.message}` };
  if (maximum.seconds > limits.maximumDurationSeconds) {
    return {
      reason: 'DurationExceedsClusterMaximum',
      message: `spec.maximumDuration ${maximum.seconds}s exceeds the cluster maximum ${limits.maximumDurationSeconds}s`,
    };
  }
  const ttl = parseEphemeralDuration(spec.pendingRequestTTL ?? DEFAULT_PENDING_TTL);
  if (!ttl.ok) return { reason: 'InvalidDuration', message: `spec.pendingRequestTTL ${ttl.message}` };
  if (ttl.seconds > limits.maxPendingTtlSeconds) {
    return {
      reason: 'DurationExceedsClusterMaximum',
      message: `spec.pendingRequestTTL ${ttl.seconds}s exceeds the cluster maximum ${limits.maxPendingTtlSeconds}s`,
    };
  }
  let defaultSeconds: number | null = null;
  if (spec.defaultDuration != null) {
    const parsed = parseEphemeralDuration(spec.defaultDuration);
    if (!parsed.ok) return { reason: 'InvalidDuration', message: `spec.defaultDuration ${parsed.message}` };
    if (parsed.seconds > maximum.seconds) {
      return {
        reason: 'InvalidDuration',
        message: `spec.defaultDuration ${parsed.seconds}s exceeds spec.maximumDuration ${maximum.seconds}s`,
      };
    }
    defaultSeconds = parsed.seconds;
  }
  return { maximumSeconds: maximum.seconds, defaultSeconds, pendingTtlSeconds: ttl.seconds };
}

/** Checks the bundle against the expanded target; the first problem, or the sorted bundle roles. */
export function bundleChecks(
  memberships: readonly { readonly role: string }[],
  target: TargetView | null,
  targetName: string,
): Rejection | { readonly roles: readonly string[] } {
  if (memberships.length === 0) return { reason: 'EmptyBundle', message: 'spec.memberships is empty' };
  if (target === null) {
    return {
      reason: 'TargetNotFound',
      message: `PostgresPolicy ${targetName} does not exist in this namespace`,
    };
  }
  if (!target.applies) {
    return {
      reason: 'TargetNotApplyMode',
      message: `PostgresPolicy ${targetName} is not in apply mode, so it never executes`,
    };
  }
  const roles = rolesOf(target);
  if (roles === undefined) {
    const invalid = (target.roles as { invalid: string }).invalid;
    return { reason: 'TargetInvalid', message: `PostgresPolicy ${targetName} does not expand: ${invalid}` };
  }
  const seen = new Set<string>();
  for (const [index, { role }] of memberships.entries()) {
    const found = roles.get(role);
    if (found === undefined) {
      return {
        reason: 'RoleNotFound',
        message: `spec.memberships[${index}].role ${role} is not a role of PostgresPolicy ${targetName}`,
      };
    }
    if (found.external) {
      return {
        reason: 'ExternalTargetRole',
        message: `spec.memberships[${index}].role ${role} is external in PostgresPolicy ${targetName}`,
      };
    }
    if (seen.has(role)) {
      return {
        reason: 'DuplicateMembership',
        message: `spec.memberships[${index}].role ${role} is listed twice`,
      };
    }
    seen.add(role);
  }
  return { roles: [...seen].sort(compareCodePoints) };
}

/**
 * Bundle roles the target declares privileged (attributes, `pg_*` roles, declared memberships reaching them)
 * that neither the policy's opt-in nor the operator allows. Reported early; the executor checks the live
 * catalog again under the lock (ADR 0021).
 */
function privilegedCheck(
  policy: EphemeralAccessPolicy,
  target: TargetView,
  limits: ClusterLimits,
): Rejection | null {
  const findings = privilegedRoles(
    policy.spec.memberships.map((m) => m.role),
    target.privilegeGraph ?? [],
  );
  const refusal = privilegedRefusal(
    findings,
    policy.metadata.namespace ?? '',
    policy.spec.allowPrivilegedRoles === true,
    limits.privilegedNamespaces ?? NO_PRIVILEGED_NAMESPACES,
  );
  return refusal === null
    ? null
    : { reason: 'PrivilegedRole', message: `in PostgresPolicy ${target.name}, ${refusal}` };
}

/** Validates an access policy against the cluster limits and its target (null when it does not exist). */
export function validateAccessPolicy(
  policy: EphemeralAccessPolicy,
  target: TargetView | null,
  limits: ClusterLimits,
): AccessPolicyVerdict {
  const durations = durationChecks(policy.spec, limits);
  const bundle = bundleChecks(policy.spec.memberships, target, policy.spec.postgresPolicyRef.name);
  const durationProblem = 'reason' in durations ? durations : null;
  const refProblem = 'reason' in bundle ? bundle : privilegedCheck(policy, target!, limits);
  if (durationProblem !== null || refProblem !== null) {
    return { ok: false, durations: durationProblem, refs: refProblem };
  }
  return {
    ok: true,
    terms: {
      ...(durations as Omit<AccessPolicyTerms, 'roles'>),
      roles: (bundle as { roles: string[] }).roles,
    },
  };
}

/** A request that holds access through this policy (anchored), with what it holds. */
export interface HoldingRequest {
  readonly name: string;
  readonly uid: string;
  readonly subject: string;
  readonly roles: readonly string[];
}

/** The roles a holding request needs that the target no longer declares (its retirement is blocked). */
function blockedBy(request: HoldingRequest, target: TargetView | null): string[] {
  const roles = target === null ? undefined : rolesOf(target);
  if (roles === undefined) return [];
  return [request.subject, ...request.roles].filter((r) => !roles.has(r));
}

/** Inputs of {@link accessPolicyStatus}. */
export interface AccessPolicyInput {
  readonly policy: EphemeralAccessPolicy;
  readonly target: TargetView | null;
  readonly limits: ClusterLimits;
  /** Requests holding access through this policy (activation anchor present). */
  readonly holding: readonly HoldingRequest[];
  readonly now: string;
}

/** The status the access policy should carry now. */
export function accessPolicyStatus(input: AccessPolicyInput): EphemeralAccessPolicyStatus {
  const { policy, target, limits, holding, now } = input;
  const previous = policy.status?.conditions ?? [];
  const verdict = validateAccessPolicy(policy, target, limits);
  const conditions: AccessCondition[] = [];
  if (verdict.ok) {
    conditions.push(stampCondition(previous, { type: 'Accepted', status: 'True', reason: 'Accepted' }, now));
    conditions.push(
      stampCondition(previous, { type: 'ResolvedRefs', status: 'True', reason: 'Resolved' }, now),
    );
  } else {
    const first = verdict.durations ?? verdict.refs!;
    conditions.push(
      stampCondition(
        previous,
        { type: 'Accepted', status: 'False', reason: first.reason, message: first.message },
        now,
      ),
    );
    conditions.push(
      stampCondition(
        previous,
        verdict.refs === null
          ? { type: 'ResolvedRefs', status: 'True', reason: 'Resolved' }
          : {
              type: 'ResolvedRefs',
              status: 'False',
              reason: verdict.refs.reason,
              message: verdict.refs.message,
            },
        now,
      ),
    );
  }
  const suspended =
    policy.spec.suspend === true
      ? {
          status: 'True',
          reason: 'AccessPolicySuspended',
          message: 'spec.suspend is true: no new access is admitted',
        }
      : target?.suspended === true
        ? {
            status: 'True',
            reason: 'TargetPolicySuspended',
            message: `PostgresPolicy ${target.name} is suspended`,
          }
        : { status: 'False', reason: 'Active' };
  conditions.push(stampCondition(previous, { type: 'Suspended', ...suspended }, now));
  const blocking = holding
    .map((request) => ({ request, missing: blockedBy(request, target) }))
    .filter((b) => b.missing.length > 0);
  conditions.push(
    stampCondition(
      previous,
      blocking.length === 0
        ? { type: 'RoleRetirementBlocked', status: 'False', reason: 'NoBlockingRequests' }
        : {
            type: 'RoleRetirementBlocked',
            status: 'True',
            reason: 'ActiveRequest',
            message: blocking
              .map(
                (b) =>
                  `request ${b.request.name} (uid ${b.request.uid}) holds ${b.missing.join(', ')}, which PostgresPolicy ${policy.spec.postgresPolicyRef.name} no longer declares`,
              )
              .join('; '),
          },
      now,
    ),
  );
  return {
    conditions,
    observedGeneration: policy.metadata.generation ?? null,
    resolvedRoles: verdict.ok ? [...verdict.terms.roles] : [],
  };
}
