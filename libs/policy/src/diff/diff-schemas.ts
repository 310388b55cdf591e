// Schema diff: create missing schemas, transfer owners, and repair the owner's own CREATE/USAGE.
// During a transfer the owner privileges are re-asserted in full, because transfer ACL behaviour varies.

import { compareCodePoints } from '../canonical-order.js';
import type { ChangeOf } from '../model/change.js';
import type { SchemaEntry } from '../model/state.js';
import type { Privilege } from '../model/vocabulary.js';
import { minus, privilegeSet } from './privilege-set.js';

/** What an owned schema's owner always holds on it. */
export const OWNER_PRIVILEGES: readonly Privilege[] = ['CREATE', 'USAGE'];

/** Schema changes plus the owners incoming through a transfer (for revoke suppression). */
export function diffSchemas(
  desired: readonly SchemaEntry[],
  current: ReadonlyMap<string, SchemaEntry>,
): {
  creates: readonly ChangeOf<'create_schema'>[];
  transfers: readonly ChangeOf<'alter_schema_owner'>[];
  ownerPrivileges: readonly ChangeOf<'ensure_schema_owner_privileges'>[];
  incomingOwners: ReadonlyMap<string, string>;
} {
  const creates: ChangeOf<'create_schema'>[] = [];
  const transfers: ChangeOf<'alter_schema_owner'>[] = [];
  const ownerPrivileges: ChangeOf<'ensure_schema_owner_privileges'>[] = [];
  const incomingOwners = new Map<string, string>();
  for (const schema of [...desired].sort((a, b) => compareCodePoints(a.name, b.name))) {
    const held = current.get(schema.name);
    if (held === undefined) {
      creates.push({ kind: 'create_schema', name: schema.name, owner: schema.owner });
      continue;
    }
    if (schema.owner === null) continue;
    const transfer = held.owner !== schema.owner;
    if (transfer) {
      transfers.push({ kind: 'alter_schema_owner', name: schema.name, owner: schema.owner });
      incomingOwners.set(schema.name, schema.owner);
    }
    const want = privilegeSet([...OWNER_PRIVILEGES, ...schema.owner_privileges]);
    const missing = minus(want, transfer ? [] : held.owner_privileges);
    if (missing.length > 0) {
      ownerPrivileges.push({
        kind: 'ensure_schema_owner_privileges',
        name: schema.name,
        owner: schema.owner,
        privileges: missing,
      });
    }
  }
  return { creates, transfers, ownerPrivileges, incomingOwners };
}
