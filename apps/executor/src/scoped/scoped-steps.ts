// Small pure pieces of scoped execution: the inspection scope of a bundle (its roles and the subject, so
// the snapshot holds every live edge of the bundle roles and the subject's attributes), the result of
// refused memberships, the Applied facts of what ran, and the memberships the target policy declares.
import type { ExecutableStatement } from '@rolepolicy/catalog';
import type { PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import {
  compareCodePoints,
  expandPolicy,
  logicalFingerprint,
  type BundleMembership,
  type ManagedScope,
  type PolicyContent,
  type ScopedRefusal,
  type scopedChanges,
} from '@rolepolicy/policy';
import type { ScopedFacts } from './scoped-result.js';
import type { PlanRequest } from './scoped-verify.js';

/** Inspects exactly the bundle roles and the subject: roles, their attributes and memberships. */
export function bundleScope(memberships: readonly BundleMembership[], subject: string): ManagedScope {
  return rolesScope([...memberships.map((m) => m.role), subject]);
}

/** Inspects exactly `names`: the roles, their attributes and every membership granting them. */
export function rolesScope(names: readonly string[]): ManagedScope {
  const roles = [...new Set(names)].sort(compareCodePoints);
  return {
    roles,
    membership_grantors: [],
    schemas: [],
    owned_schemas: [],
    wildcards: [],
    public_objects: [],
    default_privilege_scopes: [],
    include_database_privileges: false,
    database_targets: [],
    function_signatures: [],
  };
}

/** A refused plan: the first refusal's reason, every refusal in the message; nothing ran. */
export function refusalFacts(refusals: readonly ScopedRefusal[]): ScopedFacts {
  return {
    outcome: 'Failed',
    reason: refusals[0]!.reason,
    message: `${refusals.map((r) => r.message).join('; ')}; nothing was run`,
  };
}

/** The Applied facts of rendered membership changes: what ran, what was kept and why. */
export function appliedFacts(
  operation: PlanRequest['operation'],
  computed: ReturnType<typeof scopedChanges>,
  statements: readonly ExecutableStatement[],
): ScopedFacts {
  return {
    outcome: 'Applied',
    reason: operation === 'Activate' ? 'MembershipsGranted' : 'MembershipsRevoked',
    message:
      `${statements.length} statement(s) in one transaction; ` +
      `${computed.unchanged.length} membership(s) already as wanted` +
      (computed.retained.length > 0
        ? `; kept because the base policy declares them: ${computed.retained.map((m) => `${m.role} -> ${m.member}`).join(', ')}`
        : '') +
      (computed.shared.length > 0
        ? `; kept for other active requests: ${computed.shared
            .map(
              (s) =>
                `${s.membership.role} -> ${s.membership.member} (${s.holders.map((h) => h.name).join(', ')})`,
            )
            .join(', ')}`
        : ''),
    statements: statements.map((s) => s.redacted),
    retained: computed.retained,
  };
}

/** The memberships a policy declares, or the Blocked outcome when it does not expand. */
export function declaredMemberships(
  policy: PostgresPolicy,
):
  | { readonly ok: true; readonly memberships: Parameters<typeof scopedChanges>[0]['durable'] }
  | { readonly ok: false; readonly blocked: ScopedFacts } {
  const expansion = expandPolicy(policy.spec as PolicyContent, { policyName: policy.metadata.name });
  if (expansion.ok) return { ok: true, memberships: expansion.desired.memberships };
  const errors = expansion.errors.slice(0, 3).map((e) => `${e.path}: ${e.message}`);
  return {
    ok: false,
    blocked: {
      outcome: 'Blocked',
      reason: 'InvalidPolicy',
      message: `the target policy is invalid, so its declared memberships are unknown: ${errors.join('; ')}`,
    },
  };
}

/**
 * Blocked when the policy's connection now points at another database than the one the access was resolved
 * in (`fingerprint`, the snapshot's target); null when it is the same.
 */
export function targetMoved(
  target: { readonly host: string; readonly port: number; readonly database: string },
  fingerprint: string,
): ScopedFacts | null {
  const now = logicalFingerprint(target.host, target.port, target.database);
  if (now === fingerprint) return null;
  return {
    outcome: 'Blocked',
    reason: 'TargetFingerprintChanged',
    message:
      `the policy now connects to database ${now}, not ${fingerprint} ` +
      `where the access was resolved; nothing was run (restore the connection to proceed)`,
  };
}
