// The spec's change_summary counters: one per change, total = their sum.
// reassign_owned and drop_owned are deliberately uncounted; set_comment counts as a role alter.

import type { Change, ChangeSummary } from '../model/change.js';

type Counter = Exclude<keyof ChangeSummary, 'total'>;

/** The counter a change kind increments, or null for the uncounted retirement steps. */
export function summaryCounter(change: Change): Counter | null {
  switch (change.kind) {
    case 'create_role':
      return 'roles_created';
    case 'create_schema':
      return 'schemas_created';
    case 'alter_schema_owner':
      return 'schema_owners_altered';
    case 'ensure_schema_owner_privileges':
    case 'grant':
      return 'grants_added';
    case 'alter_role':
    case 'set_comment':
      return 'roles_altered';
    case 'revoke':
      return 'grants_revoked';
    case 'set_default_privilege':
      return 'default_privileges_set';
    case 'revoke_default_privilege':
      return 'default_privileges_revoked';
    case 'add_member':
      return 'members_added';
    case 'remove_member':
      return 'members_removed';
    case 'terminate_sessions':
      return 'sessions_terminated';
    case 'set_password':
      return 'passwords_set';
    case 'drop_role':
      return 'roles_dropped';
    case 'reassign_owned':
    case 'drop_owned':
      return null;
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** Counts changes into the spec's change_summary. */
export function summarise(changes: readonly Change[]): ChangeSummary {
  const counts: Record<Counter, number> = {
    default_privileges_revoked: 0,
    default_privileges_set: 0,
    grants_added: 0,
    grants_revoked: 0,
    members_added: 0,
    members_removed: 0,
    passwords_set: 0,
    roles_altered: 0,
    roles_created: 0,
    roles_dropped: 0,
    schema_owners_altered: 0,
    schemas_created: 0,
    sessions_terminated: 0,
  };
  let total = 0;
  for (const change of changes) {
    const counter = summaryCounter(change);
    if (counter === null) continue;
    counts[counter] += 1;
    total += 1;
  }
  return { ...counts, total };
}
