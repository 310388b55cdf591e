// The patch formats clients send: JSON merge patch (RFC 7386), JSON Patch (RFC 6902, through
// fast-json-patch), strategic merge patch and server-side apply, both treated as a merge patch.
import jsonpatch from 'fast-json-patch';
import { badRequest, unsupportedMediaType, ApiError } from './errors.js';
import type { JsonObject } from './types.js';

/** Content types of PATCH requests the emulator accepts. */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Maps a request Content-Type to a patch type, or throws 415. */
export function patchTypeOf(contentType: string | undefined): PatchType {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  switch (media) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
      return 'apply';
    default:
      throw unsupportedMediaType(media);
  }
}

/** RFC 7386: objects merge recursively, `null` deletes, everything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

// Strategic-merge directives carry list-merge hints that a plain merge must not store.
function stripDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(stripDirectives);
  if (!isObject(patch)) return patch;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    out[key] = stripDirectives(value);
  }
  return out;
}

/**
 * Applies a decoded patch body to a copy of `current` and returns the patched document. Server-side
 * apply is approximated by merging the applied configuration over the object (one field manager:
 * no managedFields, so fields a later apply omits are kept rather than removed).
 */
export function applyPatch(current: JsonObject, type: PatchType, patch: unknown): JsonObject {
  switch (type) {
    case 'merge':
    case 'strategic':
    case 'apply': {
      if (!isObject(patch)) throw badRequest('patch body must be a JSON object');
      const merged = mergePatch(current, type === 'strategic' ? stripDirectives(patch) : patch);
      return merged as JsonObject;
    }
    case 'json': {
      if (!Array.isArray(patch)) throw badRequest('json patch body must be a JSON array of operations');
      try {
        const result = jsonpatch.applyPatch(structuredClone(current), patch, true, false);
        return result.newDocument as JsonObject;
      } catch (error) {
        if (error instanceof ApiError) throw error;
        const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
        throw new ApiError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `the server rejected our request due to an error in our request: ${message}`,
          reason: 'Invalid',
          code: 422,
        });
      }
    }
    default: {
      const never: never = type;
      throw new Error(`unknown patch type ${String(never)}`);
    }
  }
}
