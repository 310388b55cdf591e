// Small pure pieces of scoped execution: the inspection scope of a bundle (its roles and the subject, so
// the snapshot holds every live edge of the bundle roles and the subject's attributes) and the result of
// refused memberships.
import {
  compareCodePoints,
  type BundleMembership,
  type ManagedScope,
  type ScopedRefusal,
} from '@rolepolicy/policy';
import type { ScopedFacts } from './scoped-result.js';

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
