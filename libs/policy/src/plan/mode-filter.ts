// Reconciliation modes as post-filters over the full diff (engine notes 3.4).
// authoritative keeps everything, adopt never drops or retires roles, additive only ever adds.

import type { Change } from '../model/change.js';
import type { ReconciliationMode } from '../model/vocabulary.js';

/** The retirement steps, which neither adopt nor additive run. */
const RETIREMENT_KINDS: ReadonlySet<Change['kind']> = new Set([
  'terminate_sessions',
  'reassign_owned',
  'drop_owned',
  'drop_role',
]);

/** Removal kinds additive mode never runs. */
const REMOVAL_KINDS: ReadonlySet<Change['kind']> = new Set([
  'revoke',
  'revoke_default_privilege',
  'remove_member',
]);

/**
 * Filters a full diff by mode. additive also drops every set_comment, every alter_role except
 * config-only alters of roles created in the same plan, every owner transfer and that transfer's
 * follow-ups (owner-privilege repair and schema-scoped set_default_privilege for that schema and owner).
 */
export function filterByMode(changes: readonly Change[], mode: ReconciliationMode): readonly Change[] {
  switch (mode) {
    case 'authoritative':
      return changes;
    case 'adopt':
      return changes.filter((c) => !RETIREMENT_KINDS.has(c.kind));
    case 'additive':
      return additive(changes);
    default: {
      const unreachable: never = mode;
      return unreachable;
    }
  }
}

function additive(changes: readonly Change[]): readonly Change[] {
  const created = new Set(changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : [])));
  const skippedTransfers = new Set(
    changes.flatMap((c) => (c.kind === 'alter_schema_owner' ? [JSON.stringify([c.name, c.owner])] : [])),
  );
  return changes.filter((c) => {
    if (RETIREMENT_KINDS.has(c.kind) || REMOVAL_KINDS.has(c.kind)) return false;
    switch (c.kind) {
      case 'set_comment':
      case 'alter_schema_owner':
        return false;
      case 'alter_role':
        return created.has(c.name) && c.attributes.every((a) => a.kind === 'set_config');
      case 'ensure_schema_owner_privileges':
        return !skippedTransfers.has(JSON.stringify([c.name, c.owner]));
      case 'set_default_privilege':
        return c.scope.type !== 'schema' || !skippedTransfers.has(JSON.stringify([c.scope.schema, c.owner]));
      default:
        return true;
    }
  });
}
