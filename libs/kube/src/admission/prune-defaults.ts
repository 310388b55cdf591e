// Pruning and defaulting of a custom resource against its structural schema, in the API server's order.
// Unknown fields are dropped, nulls of non-nullable fields are dropped (or defaulted), then defaults fill gaps.
import type { JsonSchema } from '../crds/crd-definitions.js';

/** A JSON object value. */
export type JsonObject = { [key: string]: unknown };

/** Narrows unknown to a plain JSON object. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Fields the API server never prunes at the root of a resource. */
const ROOT_OPAQUE = new Set(['metadata']);

/**
 * Returns a pruned and defaulted deep copy of `value`. The root schema is the CRD's openAPIV3Schema;
 * `metadata` is kept as written, as the API server validates ObjectMeta separately.
 */
export function pruneAndDefault(schema: JsonSchema, value: unknown): unknown {
  return walk(schema, structuredClone(value), true);
}

function walk(schema: JsonSchema, value: unknown, root: boolean): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items === undefined ? value : value.map((v) => walk(items, v, false));
  }
  if (!isJsonObject(value) || schema['x-kubernetes-preserve-unknown-fields'] === true) return value;
  const props = schema.properties;
  const extra = schema.additionalProperties;
  if (props !== undefined) {
    for (const key of Object.keys(value)) {
      const prop = props[key];
      if (prop === undefined) {
        delete value[key];
      } else if (!(root && ROOT_OPAQUE.has(key))) {
        setField(value, key, prop);
      }
    }
    for (const [key, prop] of Object.entries(props)) {
      if (!(key in value) && prop.default !== undefined)
        value[key] = walk(prop, structuredClone(prop.default), false);
    }
  } else if (typeof extra === 'object') {
    for (const key of Object.keys(value)) setField(value, key, extra);
  } else if (extra !== true && !root) {
    // `type: object` with neither properties nor additionalProperties holds no fields at all.
    for (const key of Object.keys(value)) delete value[key];
  }
  return value;
}

/** Applies the null rule to one field, then recurses into it. */
function setField(obj: JsonObject, key: string, schema: JsonSchema): void {
  const v = obj[key];
  if (v === null && schema.nullable !== true) {
    if (schema.default !== undefined) obj[key] = walk(schema, structuredClone(schema.default), false);
    else delete obj[key];
    return;
  }
  obj[key] = walk(schema, v, false);
}
