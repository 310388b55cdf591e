// Grant targets: one `ON ...` clause per object (keyword and object apart, for grouping), expanding wildcards from the plan-time inventory.
// Relation wildcards never use ALL TABLES IN SCHEMA (it also hits views, matviews, foreign tables); PG has no ALL TYPES.

import type { InventoryKind, InventoryObject } from '../model/snapshot.js';
import type { ObjectType } from '../model/vocabulary.js';
import { compareCodePoints } from '../canonical-order.js';
import { SqlRenderError } from './errors.js';
import { quoteIdent, quoteQualified } from './quote.js';
import { renderRoutineTarget } from './routine.js';

/** What a grant or revoke targets, as the change carries it. */
export interface TargetRef {
  readonly object_type: ObjectType;
  readonly schema: string | null;
  readonly name: string | null;
}

/** The wildcard object name. */
export const WILDCARD = '*';

function requireSchema(target: TargetRef): string {
  if (target.schema === null || target.schema.length === 0) {
    throw new SqlRenderError('missing_schema', `${target.object_type} grant target must name a schema`);
  }
  return target.schema;
}

function requireName(target: TargetRef): string {
  if (target.name === null || target.name.length === 0) {
    throw new SqlRenderError('missing_name', `${target.object_type} grant target must name an object`);
  }
  return target.name;
}

/** Inventory names per (kind, schema), sorted and de-duplicated once per render instead of once per wildcard. */
export type InventoryIndex = ReadonlyMap<string, readonly string[]>;

const indexKey = (kind: string, schema: string): string => `${kind}\u0000${schema}`;

/** Groups the inventory by (kind, schema); each list sorted by code point, duplicates removed. */
export function indexInventory(inventory: readonly InventoryObject[]): InventoryIndex {
  const groups = new Map<string, Set<string>>();
  for (const o of inventory) {
    const key = indexKey(o.kind, o.schema);
    let names = groups.get(key);
    if (names === undefined) groups.set(key, (names = new Set()));
    names.add(o.name);
  }
  const index = new Map<string, readonly string[]>();
  for (const [key, names] of groups) index.set(key, [...names].sort(compareCodePoints));
  return index;
}

function inventoryNames(index: InventoryIndex, kind: InventoryKind, schema: string): readonly string[] {
  return index.get(indexKey(kind, schema)) ?? [];
}

/**
 * The `ON <keyword> <objects>` of one grant target: one keyword and schema (`scope`, empty for databases,
 * schemas and the ALL ... IN SCHEMA forms) with one object, or, for a relation or type wildcard, one per
 * inventory object. Kept apart so statements with the same keyword can share one comma-separated list.
 */
export interface TargetTexts {
  readonly keyword: TargetKeyword;
  readonly scope: string;
  readonly objects: readonly string[];
}

/** The privilege_target keywords the renderer uses; each accepts a comma-separated list in PostgreSQL. */
export type TargetKeyword =
  | 'DATABASE'
  | 'SCHEMA'
  | 'TABLE'
  | 'TYPE'
  | 'SEQUENCE'
  | 'ROUTINE'
  | 'ALL SEQUENCES IN SCHEMA'
  | 'ALL ROUTINES IN SCHEMA';

const one = (keyword: TargetKeyword, scope: string, object: string): TargetTexts => ({
  keyword,
  scope,
  objects: [object],
});

/**
 * The `ON ...` clauses for one target: exactly one object, except relation and type wildcards, which expand
 * to one object per inventory object of that exact kind (none when the scope is empty).
 */
export function renderTargets(target: TargetRef, inventory: InventoryIndex): TargetTexts {
  switch (target.object_type) {
    case 'database':
      return one('DATABASE', '', quoteIdent(requireName(target)));
    case 'schema': {
      // Schema-level keys carry the schema in `name`; accept `schema` too, never default it.
      const schema = target.name ?? target.schema;
      if (schema === null || schema.length === 0) {
        throw new SqlRenderError('missing_name', 'schema grant target must name a schema');
      }
      return one('SCHEMA', '', quoteIdent(schema));
    }
    case 'table':
    case 'view':
    case 'materialized_view':
    case 'type': {
      const schema = requireSchema(target);
      const name = requireName(target);
      const keyword = target.object_type === 'type' ? 'TYPE' : 'TABLE';
      const prefix = `${quoteIdent(schema)}.`;
      const names = name === WILDCARD ? inventoryNames(inventory, target.object_type, schema) : [name];
      return { keyword, scope: schema, objects: names.map((n) => `${prefix}${quoteIdent(n)}`) };
    }
    case 'sequence': {
      const schema = requireSchema(target);
      const name = requireName(target);
      return name === WILDCARD
        ? one('ALL SEQUENCES IN SCHEMA', '', quoteIdent(schema))
        : one('SEQUENCE', schema, quoteQualified(schema, name));
    }
    case 'function': {
      const schema = requireSchema(target);
      const name = requireName(target);
      return name === WILDCARD
        ? one('ALL ROUTINES IN SCHEMA', '', quoteIdent(schema))
        : one('ROUTINE', schema, renderRoutineTarget(schema, name));
    }
    default: {
      const unreachable: never = target.object_type;
      throw new SqlRenderError('missing_name', `unknown object type ${String(unreachable)}`);
    }
  }
}
