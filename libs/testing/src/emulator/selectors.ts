// Label and field selectors as list and watch requests carry them (`?labelSelector=a=b,c in (x,y)`).
// Parsed once per request into a predicate over an object.
import { badRequest } from './errors.js';
import type { KubeObject } from './types.js';

/** A parsed selector: true when the object matches. */
export type Selector = (object: KubeObject) => boolean;

type Requirement =
  | { readonly op: 'exists' | 'notexists'; readonly key: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'eq' | 'neq'; readonly key: string; readonly value: string };

/** Splits on top-level commas (commas inside `( )` belong to a set). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function parseRequirement(text: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text);
  if (set) {
    const values = set[3]!
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v.length > 0);
    return { op: set[2] as 'in' | 'notin', key: set[1]!, values };
  }
  const cmp = /^([^=!\s]+)\s*(==|!=|=)\s*(\S*)$/.exec(text);
  if (cmp) return { op: cmp[2] === '!=' ? 'neq' : 'eq', key: cmp[1]!, value: cmp[3]! };
  if (/^![^\s=!]+$/.test(text)) return { op: 'notexists', key: text.slice(1) };
  if (/^[^\s=!()]+$/.test(text)) return { op: 'exists', key: text };
  throw badRequest(`unable to parse requirement: ${text}`);
}

function matches(req: Requirement, value: string | undefined): boolean {
  switch (req.op) {
    case 'exists':
      return value !== undefined;
    case 'notexists':
      return value === undefined;
    case 'eq':
      return value === req.value;
    case 'neq':
      return value !== req.value;
    case 'in':
      return value !== undefined && req.values.includes(value);
    case 'notin':
      return value === undefined || !req.values.includes(value);
    default: {
      const never: never = req;
      return never;
    }
  }
}

/** Parses `?labelSelector=`; an empty or absent selector matches everything. */
export function parseLabelSelector(text: string | null | undefined): Selector {
  const reqs = splitTopLevel(text ?? '').map(parseRequirement);
  return (object) => reqs.every((r) => matches(r, object.metadata.labels?.[r.key]));
}

// The API server allows a few fields per kind (metadata.name, metadata.namespace, Event's
// involvedObject.*, reason, type, ...); the emulator accepts any dotted path with = or !=.
function fieldValue(object: KubeObject, path: string): string | undefined {
  if (path === 'metadata.namespace') return object.metadata.namespace ?? '';
  let current: unknown = object;
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current === undefined || current === null ? undefined : String(current);
}

/** Parses `?fieldSelector=` (e.g. `metadata.name=x`, `involvedObject.uid=…`); = and != only. */
export function parseFieldSelector(text: string | null | undefined): Selector {
  const reqs = splitTopLevel(text ?? '').map(parseRequirement);
  for (const r of reqs) {
    if (r.op !== 'eq' && r.op !== 'neq') throw badRequest(`field selector supports = and != only: ${r.key}`);
  }
  return (object) => reqs.every((r) => matches(r, fieldValue(object, r.key)));
}
