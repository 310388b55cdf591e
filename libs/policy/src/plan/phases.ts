// Plan order: each spec phase is one contiguous run, with canonical key order inside it (engine notes 3.3).
// `phases[]` is then derived by run-length grouping, so it can never disagree with the change order.

import { compareCodePoints } from '../canonical-order.js';
import type { Change } from '../model/change.js';
import { OBJECT_TYPES, PHASES, type Phase } from '../model/vocabulary.js';
import { isPublic, scopeSchema } from '../diff/keys.js';

/** One contiguous run of same-phase changes, by index into the ordered change list. */
export interface PlanPhase {
  readonly phase: Phase;
  readonly change_indices: readonly number[];
}

type SortKey = readonly (string | number)[];

/**
 * The phase of a change. A set_password belongs to `create` when its role is created in the same plan
 * (it runs right after that CREATE ROLE), otherwise to `alter`.
 */
export function phaseOf(change: Change, createdRoles: ReadonlySet<string>): Phase {
  switch (change.kind) {
    case 'create_role':
    case 'create_schema':
      return 'create';
    case 'set_password':
      return createdRoles.has(change.name) ? 'create' : 'alter';
    case 'alter_role':
    case 'set_comment':
    case 'alter_schema_owner':
      return 'alter';
    case 'ensure_schema_owner_privileges':
    case 'grant':
    case 'set_default_privilege':
      return 'grant';
    case 'remove_member':
      return 'membership_remove';
    case 'add_member':
      return 'membership_add';
    case 'revoke':
      return 'revoke';
    case 'revoke_default_privilege':
      return 'default_privilege_revoke';
    case 'terminate_sessions':
    case 'reassign_owned':
    case 'drop_owned':
    case 'drop_role':
      return 'retire';
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** Sorts changes into plan order: phase, then kind group inside the phase, then canonical key. */
export function orderChanges(changes: readonly Change[]): readonly Change[] {
  const created = new Set(changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : [])));
  // One precomputed string per change: tuple comparison is hot at the spec's bounds (tens of thousands).
  const keyed = changes.map((change) => ({ change, key: encodeKey(sortKey(change, created)) }));
  keyed.sort(
    (a, b) =>
      compareCodePoints(a.key, b.key) ||
      compareCodePoints(JSON.stringify(a.change), JSON.stringify(b.change)),
  );
  return keyed.map((k) => k.change);
}

/** Run-length groups an ordered change list into `phases[]`. */
export function groupPhases(changes: readonly Change[]): readonly PlanPhase[] {
  const created = new Set(changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : [])));
  const phases: { phase: Phase; change_indices: number[] }[] = [];
  changes.forEach((change, index) => {
    const phase = phaseOf(change, created);
    const last = phases.at(-1);
    if (last !== undefined && last.phase === phase) last.change_indices.push(index);
    else phases.push({ phase, change_indices: [index] });
  });
  return phases;
}

function sortKey(change: Change, created: ReadonlySet<string>): SortKey {
  const phase = PHASES.indexOf(phaseOf(change, created));
  switch (change.kind) {
    case 'create_role':
      return [phase, 0, change.name, 0];
    case 'set_password':
      return created.has(change.name) ? [phase, 0, change.name, 1] : [phase, 2, change.name];
    case 'create_schema':
      return [phase, 1, change.name];
    case 'alter_role':
      return [phase, 0, change.name];
    case 'set_comment':
      return [phase, 1, change.name];
    case 'alter_schema_owner':
      return [phase, 3, change.name];
    case 'ensure_schema_owner_privileges':
      return [phase, 0, change.name];
    case 'grant':
    case 'revoke':
      return [
        phase,
        1,
        ...grantee(change.role),
        OBJECT_TYPES.indexOf(change.object_type),
        ...nullable(change.schema),
        ...nullable(change.name),
      ];
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      return [
        phase,
        2,
        change.owner,
        ...nullable(scopeSchema(change.scope)),
        OBJECT_TYPES.indexOf(change.on_type),
        ...grantee(change.grantee),
      ];
    case 'remove_member':
      return [phase, 0, change.role, change.member, ...nullable(change.grantor)];
    case 'add_member':
      return [phase, 0, change.role, change.member];
    case 'terminate_sessions':
      return [phase, 0, change.role, 0];
    case 'reassign_owned':
      return [phase, 0, change.from_role, 1];
    case 'drop_owned':
      return [phase, 0, change.role, 2];
    case 'drop_role':
      return [phase, 0, change.name, 3];
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** PUBLIC before every role. */
function grantee(name: string): SortKey {
  return isPublic(name) ? [0, ''] : [1, name];
}

/** null before every string. */
function nullable(value: string | null): SortKey {
  return value === null ? [0, ''] : [1, value];
}

/**
 * Encodes a sort tuple as one string whose code-point order is the tuple order: parts joined by NUL
 * (absent from PostgreSQL names), each part led by U+0001, small numbers as one character.
 */
function encodeKey(key: SortKey): string {
  return key
    .map((part) => '\u0001' + (typeof part === 'number' ? String.fromCharCode(0x20 + part) : part))
    .join('\u0000');
}
