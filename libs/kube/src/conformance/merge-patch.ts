// JSON merge patch (RFC 7386) and dotted-path lookup, used to replay conformance steps without a server.
// The emulator suite sends the same patches with Content-Type application/merge-patch+json.
import { isJsonObject, type JsonObject } from '../admission/prune-defaults.js';

/** Applies a merge patch: objects merge recursively, null deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const out: JsonObject = isJsonObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/** Reads `a.b.0.c` from an object; `undefined` when any segment is missing. */
export function getPath(value: unknown, dotted: string): unknown {
  let current: unknown = value;
  for (const seg of dotted.split('.')) {
    if (Array.isArray(current)) current = current[Number(seg)];
    else if (isJsonObject(current)) current = seg in current ? current[seg] : undefined;
    else return undefined;
  }
  return current;
}
