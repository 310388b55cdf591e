// Pure derivation of snapshot grant rows from exploded ACL rows: grouping per (target, grantee),
// PUBLIC rows narrowed to what declared PUBLIC rules name, and canonical ordering.

import {
  compareGrantees,
  compareNullable,
  compareObjectTypes,
  type FunctionSignature,
  type GrantEntry,
  type ObjectType,
  type Privilege,
  type PublicObjectScope,
} from '@rolepolicy/policy';

import type { AclRow } from './object-acl.repository.js';
import { canonicalPrivileges, privilegeFromCatalog } from './privileges.js';
import { keyOf } from './keys.js';

/** The ObjectType of an ACL row (relkind letters for relations). */
export function objectTypeOfRow(kind: string): ObjectType | null {
  switch (kind) {
    case 'r':
    case 'p':
      return 'table';
    case 'v':
      return 'view';
    case 'm':
      return 'materialized_view';
    case 'S':
      return 'sequence';
    case 'function':
    case 'type':
    case 'schema':
    case 'database':
      return kind;
    default:
      return null;
  }
}

/** Canonical grant order: object type, schema, name, then grantee (PUBLIC first). */
export function compareGrants(a: GrantEntry, b: GrantEntry): number {
  return (
    compareObjectTypes(a.object_type, b.object_type) ||
    compareNullable(a.schema, b.schema) ||
    compareNullable(a.name, b.name) ||
    compareGrantees(a.grantee, b.grantee)
  );
}

/** Groups ACL rows into one GrantEntry per (target, grantee); a shared non-owner grantor is kept. */
export function groupAclRows(rows: readonly AclRow[]): GrantEntry[] {
  // One mutable accumulator per key; the grantor is tracked as "one shared value or mixed" (no Sets),
  // because large snapshots group tens of thousands of rows here.
  interface Group {
    readonly objectType: ObjectType;
    readonly row: AclRow;
    readonly privileges: Privilege[];
    grantor: string | null;
  }
  const groups = new Map<string, Group>();
  for (const row of rows) {
    const objectType = objectTypeOfRow(row.kind);
    const privilege = privilegeFromCatalog(row.privilege);
    if (objectType === null || privilege === null) continue;
    const key = keyOf(objectType, row.schema, row.name, row.grantee);
    const group = groups.get(key);
    if (group) {
      group.privileges.push(privilege);
      if (group.grantor !== row.grantor) group.grantor = null;
    } else {
      groups.set(key, { objectType, row, privileges: [privilege], grantor: row.grantor });
    }
  }
  const entries: GrantEntry[] = [];
  for (const { objectType, row, privileges, grantor } of groups.values()) {
    const entry = {
      object_type: objectType,
      schema: row.schema,
      name: row.name,
      grantee: row.grantee,
      privileges: privileges.length === 1 ? privileges : canonicalPrivileges(privileges),
    };
    entries.push(grantor !== null && grantor !== row.owner ? { ...entry, grantor } : entry);
  }
  return entries.sort(compareGrants);
}

/** Keeps only PUBLIC rows a declared PUBLIC rule names (target and privilege), as the scope rules require. */
export function narrowPublicRows(
  rows: readonly AclRow[],
  rules: readonly PublicObjectScope[],
  signatures: readonly FunctionSignature[],
): AclRow[] {
  const identities = new Map<string, string | null>();
  for (const signature of signatures) {
    const id = keyOf(signature.schema, signature.declared);
    if (!identities.has(id)) identities.set(id, signature.identity);
  }
  const identityOf = (schema: string | null, declared: string): string =>
    identities.get(keyOf(schema, declared)) ?? declared;
  // Rules indexed by (type, schema): a generated policy names every schema, so a scan of all rules per
  // row would be rows x rules.
  const bySchema = new Map<string, PublicObjectScope[]>();
  for (const rule of rules) {
    const id = keyOf(
      rule.object_type,
      rule.object_type === 'schema' || rule.object_type === 'database' ? null : rule.schema,
    );
    const list = bySchema.get(id);
    if (list === undefined) bySchema.set(id, [rule]);
    else list.push(rule);
  }
  return rows.filter((row) => {
    const objectType = objectTypeOfRow(row.kind);
    const privilege = privilegeFromCatalog(row.privilege);
    if (objectType === null || privilege === null) return false;
    const schemaLevel = objectType === 'schema' || objectType === 'database';
    const candidates = bySchema.get(keyOf(objectType, schemaLevel ? null : row.schema)) ?? [];
    return candidates.some((rule) => {
      if (!rule.privileges.includes(privilege)) return false;
      if (schemaLevel) return rule.name === null || rule.name === row.name;
      if (rule.name === null || rule.name === '*') return true;
      return objectType === 'function'
        ? identityOf(rule.schema, rule.name) === row.name
        : rule.name === row.name;
    });
  });
}
