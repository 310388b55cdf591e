// Canonical JSON: the byte encoding every digest hashes. Keys sorted by code point (= UTF-8 byte order) at
// every level, no whitespace, JSON.stringify string escaping, int64 values as decimal strings.

import { compareCodePoints } from '../canonical-order.js';

/** A value canonical JSON refuses; canonicalJson turns it into a TypeError naming the value's path. */
class Rejection {
  constructor(readonly problem: string) {}
}

/** Memo of already-encoded subtrees; see {@link canonicalJson}. */
export type CanonicalJsonMemo = Pick<WeakMap<object, string>, 'get'>;

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Why `value` (a leaf, or an object that is not plain) cannot be encoded; null when it can. */
function problemOf(value: unknown): string | null {
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) return 'is not a finite number';
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        return 'is an integer beyond 2^53; pass int64 values as strings';
      }
      return null;
    case 'object':
      return value === null || Array.isArray(value) || isPlainObject(value) ? null : 'is not a plain object';
    case 'boolean':
    case 'string':
    case 'bigint':
      return null;
    default:
      return `has unsupported type ${typeof value}`;
  }
}

// Characters JSON.stringify escapes (quote, backslash, C0 controls) and surrogates (escaped when lone): a
// string without any is its own JSON text between quotes, which is much cheaper than JSON.stringify.
// eslint-disable-next-line no-control-regex -- the control characters are what is being looked for
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

function quote(text: string): string {
  return NEEDS_ESCAPING.test(text) ? JSON.stringify(text) : `"${text}"`;
}

// Member names repeat across every object of a kind (`kind`, `name`, `privileges`...): their `"name":`
// prefix is kept, bounded (cleared when full). Names only, never values, so no credential stays here.
const MEMBER_PREFIXES = new Map<string, string>();
const MEMBER_PREFIXES_MAX = 4096;

function memberPrefix(key: string): string {
  let prefix = MEMBER_PREFIXES.get(key);
  if (prefix === undefined) {
    prefix = `${quote(key)}:`;
    if (MEMBER_PREFIXES.size >= MEMBER_PREFIXES_MAX) MEMBER_PREFIXES.clear();
    MEMBER_PREFIXES.set(key, prefix);
  }
  return prefix;
}

/** Sorts a (short, freshly allocated) key list in place by code point: insertion sort, no comparator calls. */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort(compareCodePoints);
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && compareCodePoints(keys[j]!, key) > 0) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
}

function encode(value: unknown, memo: CanonicalJsonMemo | undefined): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return quote(value);
    case 'bigint':
      // int64 (system identifiers, generations) travels as a string so no reader rounds it.
      return `"${value.toString()}"`;
    case 'object': {
      const known = memo?.get(value);
      if (known !== undefined) return known;
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (i > 0) out += ',';
          out += item === undefined ? 'null' : encode(item, memo);
        }
        return `${out}]`;
      }
      if (!isPlainObject(value)) throw new Rejection('is not a plain object');
      const record = value as Readonly<Record<string, unknown>>;
      const keys = Object.keys(record);
      sortKeys(keys);
      let out = '{';
      let first = true;
      for (const key of keys) {
        const member = record[key];
        if (member === undefined) continue;
        if (first) first = false;
        else out += ',';
        out += memberPrefix(key) + encode(member, memo);
      }
      return `${out}}`;
    }
    default: {
      const problem = problemOf(value);
      if (problem !== null) throw new Rejection(problem);
      return JSON.stringify(value);
    }
  }
}

/**
 * The path (`$.a[2].b`) of the first value `encode` rejects, visiting values in the order it does. Only run
 * after a rejection, so that encoding accepted values never builds a path.
 */
function pathOfRejected(value: unknown, path: string, memo: CanonicalJsonMemo | undefined): string | null {
  // A memo hit is encoded without a look inside, whatever it is.
  if (typeof value === 'object' && value !== null && memo?.get(value) !== undefined) return null;
  if (problemOf(value) !== null) return path;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const found = item === undefined ? null : pathOfRejected(item, `${path}[${i}]`, memo);
      if (found !== null) return found;
    }
    return null;
  }
  const record = value as Readonly<Record<string, unknown>>;
  const keys = Object.keys(record);
  sortKeys(keys);
  for (const key of keys) {
    const member = record[key];
    const found = member === undefined ? null : pathOfRejected(member, `${path}.${key}`, memo);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Serialises `value` canonically: object keys sorted by code point at every level (never insertion order),
 * no whitespace, strings escaped as JSON.stringify does (`"`, `\`, `\b\f\n\r\t`, other controls as `\u00XX`,
 * everything else raw), `undefined` members skipped, bigint as a decimal string. Rejects NaN, Infinity,
 * unsafe integers, functions, symbols and class instances, because each would make a digest ambiguous; the
 * TypeError names the path of the first such value in key order (`canonicalJson: $.a[2] is not a finite
 * number`).
 *
 * `memo`, when given, returns the canonical JSON of objects already encoded (it must hold exactly
 * `canonicalJson(object)` for each, and the objects must not have changed since): composing a document from
 * encoded parts then costs only the parts not seen yet. A memo hit is trusted, not checked.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) === '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown, memo?: CanonicalJsonMemo): string {
  let rejection: Rejection;
  try {
    return encode(value, memo);
  } catch (error) {
    if (!(error instanceof Rejection)) throw error;
    rejection = error;
  }
  // The internal signal carries no value, only the rule; the message names where the value sits.
  throw new TypeError(`canonicalJson: ${pathOfRejected(value, '$', memo) ?? '$'} ${rejection.problem}`);
}
