// External and predefined (`pg_*`) roles: referenced, never created, altered, dropped or password-managed.
// Their memberships change only through declared edges, or exclusive stanzas for non-`pg_*` members.

import type { Change } from '../model/change.js';
import type { DesiredState } from '../model/desired.js';
import { isPredefinedRole, membershipKeyId } from './keys.js';

/** A predicate: is this role unmanaged (declared `external: true`, or a `pg_*` role)? */
export function unmanagedRoles(desired: Pick<DesiredState, 'roles'>): (role: string) => boolean {
  const external = new Set(desired.roles.filter((r) => r.external).map((r) => r.name));
  return (role) => external.has(role) || isPredefinedRole(role);
}

/**
 * Drops changes an unmanaged role must never receive (engine notes 3.5): create, alter, comment,
 * password, drop and every retirement step; membership adds into it unless declared; membership
 * removals from it unless the edge is declared, or the stanza is exclusive and the member is not `pg_*`
 * (built-in `pg_* -> pg_*` edges such as pg_monitor -> pg_read_all_stats are never revoked).
 */
export function filterUnmanaged(
  changes: readonly Change[],
  desired: Pick<DesiredState, 'roles' | 'memberships' | 'exclusive_membership_roles'>,
): readonly Change[] {
  const unmanaged = unmanagedRoles(desired);
  const declaredEdges = new Set(desired.memberships.map(membershipKeyId));
  const exclusive = new Set(desired.exclusive_membership_roles);
  return changes.filter((change) => {
    switch (change.kind) {
      case 'create_role':
      case 'alter_role':
      case 'set_comment':
      case 'set_password':
      case 'drop_role':
        return !unmanaged(change.name);
      case 'terminate_sessions':
      case 'drop_owned':
        return !unmanaged(change.role);
      case 'reassign_owned':
        return !unmanaged(change.from_role);
      case 'add_member':
        return !unmanaged(change.role) || declaredEdges.has(membershipKeyId(change));
      case 'remove_member':
        return (
          !unmanaged(change.role) ||
          declaredEdges.has(membershipKeyId(change)) ||
          (exclusive.has(change.role) && !isPredefinedRole(change.member))
        );
      case 'create_schema':
      case 'alter_schema_owner':
      case 'ensure_schema_owner_privileges':
      case 'grant':
      case 'revoke':
      case 'set_default_privilege':
      case 'revoke_default_privilege':
        return true;
      default: {
        const unreachable: never = change;
        return unreachable;
      }
    }
  });
}
