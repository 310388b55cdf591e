// Pure rules the registry applies to objects: timestamps, the generation-relevant part, Secret
// stringData folding and the fields a schema pruned (for strict field validation).
import type { JsonObject, KubeObject, ResourceType } from './types.js';

/** RFC 3339 with second precision, as the API server writes creationTimestamp. */
export function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Deep copy of plain JSON data. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Everything but metadata and status: what `metadata.generation` tracks. */
export function specPart(object: KubeObject): JsonObject {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = object;
  return rest;
}

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Dotted paths of non-null fields present in `sent` but pruned from `kept` (metadata is not schema-checked). */
export function prunedFields(sent: unknown, kept: unknown, path = ''): string[] {
  if (Array.isArray(sent) && Array.isArray(kept)) {
    return sent.flatMap((item, i) => prunedFields(item, kept[i], `${path}[${i}]`));
  }
  if (!isObject(sent) || !isObject(kept)) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(sent)) {
    if (path === '' && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) continue;
    const child = path === '' ? key : `${path}.${key}`;
    if (!(key in kept)) {
      if (value !== null) found.push(child);
    } else found.push(...prunedFields(value, kept[key], child));
  }
  return found;
}

/** Defaults a Secret's `type` to Opaque and folds `stringData` into base64 `data`, as the API server does on write. */
export function normalizeSecret(type: ResourceType, object: KubeObject): void {
  if (type.group !== '' || type.kind !== 'Secret') return;
  if (object['type'] === undefined || object['type'] === '') object['type'] = 'Opaque';
  if (!isObject(object['stringData'])) return;
  const data = isObject(object['data']) ? { ...object['data'] } : {};
  for (const [key, value] of Object.entries(object['stringData'])) {
    data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  object['data'] = data;
  delete object['stringData'];
}
