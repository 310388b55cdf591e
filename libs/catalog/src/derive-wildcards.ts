// Wildcard support: which inventory objects miss a desired wildcard privilege (so grantability must be
// asked), and the blocking report for the ones the executor cannot grant.

import {
  compareCodePoints,
  type GrantEntry,
  type InventoryKind,
  type InventoryObject,
  type Privilege,
  type UnsatisfiableWildcardGrant,
  type WildcardScope,
} from '@rolepolicy/policy';

import type { GrantabilityQuestion, GrantabilityRow, InventoryRow } from './inventory.repository.js';
import { canonicalPrivileges } from './privileges.js';
import { keyOf } from './keys.js';

/** Kinds a wildcard can enumerate (schema and database grants have no inventory). */
export function inventoryKindOf(objectType: string): InventoryKind | null {
  switch (objectType) {
    case 'table':
    case 'view':
    case 'materialized_view':
    case 'sequence':
    case 'function':
    case 'type':
      return objectType;
    default:
      return null;
  }
}

/** An object missing some privileges of one wildcard. */
export interface WildcardGap {
  readonly wildcard: WildcardScope;
  readonly object: InventoryRow;
  readonly missing: readonly Privilege[];
}

/** For each wildcard, the inventory objects that lack some desired privilege for its grantee. */
export function findWildcardGaps(
  wildcards: readonly WildcardScope[],
  inventory: readonly InventoryRow[],
  grants: readonly GrantEntry[],
): WildcardGap[] {
  const held = new Map<string, ReadonlySet<Privilege>>();
  for (const grant of grants) {
    held.set(keyOf(grant.object_type, grant.schema, grant.name, grant.grantee), new Set(grant.privileges));
  }
  // Objects per (kind, schema), so each wildcard visits only its own scope.
  const scopes = new Map<string, InventoryRow[]>();
  for (const object of inventory) {
    const key = keyOf(object.kind, object.schema);
    const list = scopes.get(key);
    if (list) list.push(object);
    else scopes.set(key, [object]);
  }
  const gaps: WildcardGap[] = [];
  for (const wildcard of wildcards) {
    const kind = inventoryKindOf(wildcard.object_type);
    if (kind === null) continue;
    for (const object of scopes.get(keyOf(kind, wildcard.schema)) ?? []) {
      const has = held.get(keyOf(kind, object.schema, object.name, wildcard.grantee)) ?? new Set();
      const missing = wildcard.privileges.filter((privilege) => !has.has(privilege));
      if (missing.length > 0) gaps.push({ wildcard, object, missing });
    }
  }
  return gaps;
}

/** The distinct (object, privilege) questions for the grantability read. */
export function grantabilityQuestions(gaps: readonly WildcardGap[]): GrantabilityQuestion[] {
  const seen = new Map<string, GrantabilityQuestion>();
  for (const gap of gaps) {
    for (const privilege of gap.missing) {
      seen.set(`${gap.object.oid}:${privilege}`, { oid: gap.object.oid, kind: gap.object.kind, privilege });
    }
  }
  return [...seen.values()];
}

/** Groups the non-grantable gaps into one blocking report per wildcard (up to 5 examples each). */
export function unsatisfiableWildcards(
  gaps: readonly WildcardGap[],
  answers: readonly GrantabilityRow[],
  executor: string,
): UnsatisfiableWildcardGrant[] {
  const grantable = new Set(
    answers.filter((row) => row.grantable).map((row) => `${row.oid}:${row.privilege}`),
  );
  const reports = new Map<
    string,
    { wildcard: WildcardScope; privileges: Privilege[]; objects: InventoryRow[] }
  >();
  for (const gap of gaps) {
    const blocked = gap.missing.filter((privilege) => !grantable.has(`${gap.object.oid}:${privilege}`));
    if (blocked.length === 0) continue;
    const key = keyOf(gap.wildcard.grantee, gap.wildcard.object_type, gap.wildcard.schema);
    const report = reports.get(key) ?? { wildcard: gap.wildcard, privileges: [], objects: [] };
    report.privileges.push(...blocked);
    report.objects.push(gap.object);
    reports.set(key, report);
  }
  return [...reports.values()].map(({ wildcard, privileges, objects }) => {
    const sorted = [...new Map(objects.map((object) => [object.name, object])).values()].sort((a, b) =>
      compareCodePoints(a.name, b.name),
    );
    return {
      grantee: wildcard.grantee,
      object_type: inventoryKindOf(wildcard.object_type)!,
      schema: wildcard.schema,
      privileges: canonicalPrivileges(privileges),
      executor,
      count: sorted.length,
      examples: sorted.slice(0, 5).map((object) => ({ name: object.name, owner: object.owner })),
    };
  });
}

/** Inventory rows plus objects seen in ACL rows, as snapshot InventoryObjects, de-duplicated and sorted. */
export function snapshotInventory(
  rows: readonly InventoryRow[],
  aclObjects: readonly InventoryObject[],
): InventoryObject[] {
  const all = new Map<string, InventoryObject>();
  for (const object of [
    ...rows.map(({ kind, schema, name, owner }) => ({ kind, schema, name, owner })),
    ...aclObjects,
  ]) {
    const kind = inventoryKindOf(object.kind);
    if (kind === null) continue;
    all.set(keyOf(kind, object.schema, object.name), { ...object, kind });
  }
  return [...all.values()].sort(
    (a, b) =>
      compareCodePoints(a.kind, b.kind) ||
      compareCodePoints(a.schema, b.schema) ||
      compareCodePoints(a.name, b.name),
  );
}
