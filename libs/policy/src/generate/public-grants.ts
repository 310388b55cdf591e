// PUBLIC in generated policies: PostgreSQL gives PUBLIC EXECUTE on functions, USAGE on types and CONNECT,
// TEMPORARY on databases unless revoked; anything PUBLIC holds beyond that is written as a present grant,
// and every built-in privilege it lost as `ensure: absent` (authoritative mode manages only PUBLIC rules
// that are written down). Default privileges likewise: the global layer's built-ins are EXECUTE on
// functions and USAGE on types.

import { compareCodePoints } from '../canonical-order.js';
import type { DefaultPrivilegeGrantSpec, GrantSpec } from '../model/content.js';
import { PUBLIC_GRANTEE, type ObjectType, type Privilege } from '../model/vocabulary.js';
import type { GenerateSource } from './source.js';

/** What PUBLIC holds on an object (or gets by default) when nobody revoked it. */
export function builtInPublicPrivileges(type: ObjectType): readonly Privilege[] {
  switch (type) {
    case 'function':
      return ['EXECUTE'];
    case 'type':
      return ['USAGE'];
    case 'database':
      return ['CONNECT', 'TEMPORARY'];
    default:
      return [];
  }
}

function target(type: ObjectType, schema: string | null, name: string): GrantSpec['object'] {
  return type === 'schema' || type === 'database' ? { type, name } : { type, schema, name };
}

/** PUBLIC grant entries (present beyond the built-ins, absent for lost built-ins), sorted. */
export function publicGrants(source: GenerateSource): GrantSpec[] {
  const held = new Map<string, readonly Privilege[]>();
  const key = (type: string, schema: string | null, name: string): string =>
    JSON.stringify([type, schema, name]);
  for (const grant of source.snapshot.grants) {
    if (grant.grantee === PUBLIC_GRANTEE && grant.name !== null)
      held.set(key(grant.object_type, grant.schema, grant.name), grant.privileges);
  }
  const targets: { type: ObjectType; schema: string | null; name: string }[] = [
    { type: 'database', schema: null, name: source.snapshot.current_database },
    ...source.snapshot.schemas.map((s) => ({ type: 'schema' as const, schema: null, name: s.name })),
    ...source.snapshot.inventory.map((o) => ({ type: o.kind as ObjectType, schema: o.schema, name: o.name })),
  ];
  const out: GrantSpec[] = [];
  for (const t of targets) {
    const has = held.get(key(t.type, t.schema, t.name)) ?? [];
    const builtIn = builtInPublicPrivileges(t.type);
    const extra = has.filter((p) => !builtIn.includes(p));
    const lost = builtIn.filter((p) => !has.includes(p));
    const object = target(t.type, t.schema, t.name);
    if (extra.length > 0) out.push({ role: PUBLIC_GRANTEE, object, privileges: extra });
    if (lost.length > 0) out.push({ role: PUBLIC_GRANTEE, ensure: 'absent', object, privileges: lost });
  }
  return out;
}

/** Default-privilege items for PUBLIC, keyed by `JSON [owner, schema|null]`. */
export function publicDefaultItems(source: GenerateSource): Map<string, DefaultPrivilegeGrantSpec[]> {
  const items = new Map<string, DefaultPrivilegeGrantSpec[]>();
  const add = (owner: string, schema: string | null, item: DefaultPrivilegeGrantSpec): void => {
    const id = JSON.stringify([owner, schema]);
    items.set(id, [...(items.get(id) ?? []), item]);
  };
  const heldGlobal = new Map<string, readonly Privilege[]>();
  for (const entry of source.snapshot.default_privileges) {
    if (entry.grantee !== PUBLIC_GRANTEE) continue;
    if (entry.scope.type === 'schema') {
      add(entry.owner, entry.scope.schema, {
        on_type: entry.on_type,
        privileges: [...entry.privileges],
        role: PUBLIC_GRANTEE,
      });
    } else heldGlobal.set(JSON.stringify([entry.owner, entry.on_type]), entry.privileges);
  }
  const pairs = [...source.global_default_pairs].sort(
    (a, b) => compareCodePoints(a.owner, b.owner) || compareCodePoints(a.on_type, b.on_type),
  );
  for (const pair of pairs) {
    const has = heldGlobal.get(JSON.stringify([pair.owner, pair.on_type])) ?? [];
    const builtIn =
      pair.on_type === 'function' || pair.on_type === 'type' ? builtInPublicPrivileges(pair.on_type) : [];
    const extra = has.filter((p) => !builtIn.includes(p));
    const lost = builtIn.filter((p) => !has.includes(p));
    if (extra.length > 0)
      add(pair.owner, null, { on_type: pair.on_type, privileges: extra, role: PUBLIC_GRANTEE });
    if (lost.length > 0)
      add(pair.owner, null, {
        ensure: 'absent',
        on_type: pair.on_type,
        privileges: lost,
        role: PUBLIC_GRANTEE,
      });
  }
  return items;
}
