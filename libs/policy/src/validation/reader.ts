// Primitive readers that turn `unknown` into typed values while recording every violation with its path.
// Kubernetes prunes nulls on non-nullable fields, so a null there reads as "absent", as admission would see it.

import { type ErrorSink, keyPath, report } from './errors.js';
import { MESSAGES } from './messages.js';

/** A plain JSON object. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** True for plain objects (not arrays, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Length in Unicode code points (what the spec calls characters). */
export function charLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** Length in UTF-8 bytes (what PostgreSQL's NAMEDATALEN limit counts). */
export function utf8Length(value: string): number {
  let bytes = 0;
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return bytes;
}

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Reads an object, reporting fields outside `allowed`. Returns undefined (and reports) for non-objects. */
export function readObject(
  sink: ErrorSink,
  value: unknown,
  path: string,
  allowed: readonly string[],
): JsonObject | undefined {
  if (!isObject(value)) {
    report(sink, path, MESSAGES.mustBeObject);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) report(sink, keyPath(path, key), MESSAGES.unknownField(allowed));
  }
  return value;
}

/** String bounds: characters always; UTF-8 bytes for identifiers. */
export interface StringBounds {
  readonly min: number;
  readonly max: number;
  readonly maxBytes?: number;
}

/** Checks a string against bounds, reporting each violated bound. Returns whether it passed. */
export function checkString(sink: ErrorSink, value: string, path: string, bounds: StringBounds): boolean {
  let ok = true;
  const chars = charLength(value);
  if (chars < bounds.min) {
    report(sink, path, MESSAGES.tooShort(bounds.min));
    ok = false;
  }
  if (chars > bounds.max) {
    report(sink, path, MESSAGES.tooLong(bounds.max));
    ok = false;
  }
  if (bounds.maxBytes !== undefined && utf8Length(value) > bounds.maxBytes) {
    report(sink, path, MESSAGES.tooManyBytes(bounds.maxBytes));
    ok = false;
  }
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) {
    report(sink, path, MESSAGES.badCharacters);
    ok = false;
  }
  return ok;
}

/** Reads a string value (not a field). Returns undefined (and reports) when invalid. */
export function readStringValue(
  sink: ErrorSink,
  value: unknown,
  path: string,
  bounds: StringBounds,
): string | undefined {
  if (typeof value !== 'string') {
    report(sink, path, MESSAGES.mustBeString);
    return undefined;
  }
  return checkString(sink, value, path, bounds) ? value : undefined;
}

/** Field presence: `absent` (missing, or null on a non-nullable field), `null`, or a value. */
type Field =
  | { readonly kind: 'absent' }
  | { readonly kind: 'null' }
  | { readonly kind: 'value'; readonly value: unknown };

function field(obj: JsonObject, key: string, nullable: boolean): Field {
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return { kind: 'absent' };
  const value = obj[key];
  if (value === undefined) return { kind: 'absent' };
  if (value === null) return nullable ? { kind: 'null' } : { kind: 'absent' };
  return { kind: 'value', value };
}

/** Result of reading an optional field: undefined = absent or invalid; null = explicit null (nullable only). */
export type Read<T> = T | null | undefined;

/** Reads an optional (maybe nullable) string field. */
export function readString(
  sink: ErrorSink,
  obj: JsonObject,
  key: string,
  path: string,
  bounds: StringBounds,
  nullable: boolean,
): Read<string> {
  const f = field(obj, key, nullable);
  if (f.kind === 'absent') return undefined;
  if (f.kind === 'null') return null;
  return readStringValue(sink, f.value, keyPath(path, key), bounds);
}

/** Reads a required string field; reports `is required` when missing. */
export function readRequiredString(
  sink: ErrorSink,
  obj: JsonObject,
  key: string,
  path: string,
  bounds: StringBounds,
): string | undefined {
  const f = field(obj, key, false);
  if (f.kind !== 'value') {
    report(sink, keyPath(path, key), MESSAGES.required);
    return undefined;
  }
  return readStringValue(sink, f.value, keyPath(path, key), bounds);
}

/** Reads an optional (maybe nullable) boolean field. */
export function readBoolean(
  sink: ErrorSink,
  obj: JsonObject,
  key: string,
  path: string,
  nullable: boolean,
): Read<boolean> {
  const f = field(obj, key, nullable);
  if (f.kind === 'absent') return undefined;
  if (f.kind === 'null') return null;
  if (typeof f.value !== 'boolean') {
    report(sink, keyPath(path, key), MESSAGES.mustBeBoolean);
    return undefined;
  }
  return f.value;
}

/** Reads an optional (maybe nullable) integer field within [min, max]. */
export function readInteger(
  sink: ErrorSink,
  obj: JsonObject,
  key: string,
  path: string,
  range: { readonly min: number; readonly max: number; readonly message?: string },
  nullable: boolean,
): Read<number> {
  const f = field(obj, key, nullable);
  if (f.kind === 'absent') return undefined;
  if (f.kind === 'null') return null;
  const at = keyPath(path, key);
  if (typeof f.value !== 'number' || !Number.isInteger(f.value)) {
    report(sink, at, MESSAGES.mustBeInteger);
    return undefined;
  }
  if (f.value < range.min || f.value > range.max) {
    report(sink, at, range.message ?? MESSAGES.outOfRange(range.min, range.max));
    return undefined;
  }
  return f.value;
}

/** Reads an optional enum field. */
export function readEnum<T extends string>(
  sink: ErrorSink,
  obj: JsonObject,
  key: string,
  path: string,
  allowed: readonly T[],
  nullable: boolean,
): Read<T> {
  const f = field(obj, key, nullable);
  if (f.kind === 'absent') return undefined;
  if (f.kind === 'null') return null;
  return readEnumValue(sink, f.value, keyPath(path, key), allowed);
}

/** Reads an enum value (not a field). */
export function readEnumValue<T extends string>(
  sink: ErrorSink,
  value: unknown,
  path: string,
  allowed: readonly T[],
): T | undefined {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  report(sink, path, MESSAGES.notInEnum(allowed));
  return undefined;
}

/** Raw access to a field for nested readers; null on non-nullable fields reads as absent. */
export function readField(obj: JsonObject, key: string, nullable: boolean): Read<unknown> {
  const f = field(obj, key, nullable);
  return f.kind === 'absent' ? undefined : f.kind === 'null' ? null : f.value;
}

/**
 * Reads an array field with a size bound and a per-item reader. Items whose reader returns undefined are
 * dropped from the result (their errors are already recorded), so later rules still see the valid ones;
 * item readers register each entry's path in the {@link Locations} map so later rules can still point at it.
 */
export function readArray<T>(
  sink: ErrorSink,
  obj: JsonObject,
  key: string,
  path: string,
  bounds: { readonly min?: number; readonly max: number; readonly required?: boolean },
  item: (value: unknown, itemPath: string, index: number) => T | undefined,
): readonly T[] | undefined {
  const at = keyPath(path, key);
  const f = field(obj, key, false);
  if (f.kind !== 'value') {
    if (bounds.required === true) report(sink, at, MESSAGES.required);
    return undefined;
  }
  if (!Array.isArray(f.value)) {
    report(sink, at, MESSAGES.mustBeArray);
    return undefined;
  }
  const list: readonly unknown[] = f.value;
  if (list.length > bounds.max) report(sink, at, MESSAGES.tooManyItems(bounds.max));
  if (bounds.min !== undefined && list.length < bounds.min)
    report(sink, at, MESSAGES.tooFewItems(bounds.min));
  const items: T[] = [];
  list.forEach((value, index) => {
    const read = item(value, `${at}[${index}]`, index);
    if (read !== undefined) items.push(read);
  });
  return items;
}

/** Where each typed entry came from: entry object -> its JSON path. Filled while reading. */
export type Locations = Map<object, string>;
