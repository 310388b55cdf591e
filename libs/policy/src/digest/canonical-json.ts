// Canonical JSON: the byte encoding every digest hashes. Keys sorted by code point (= UTF-8 byte order) at
// every level, no whitespace, JSON.stringify string escaping, int64 values as decimal strings.

import { compareCodePoints } from '../canonical-order.js';

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function encode(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      // int64 (system identifiers, generations) travels as a string so no reader rounds it.
      return JSON.stringify(value.toString());
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${path} is not a finite number`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw new TypeError(`canonicalJson: ${path} is an integer beyond 2^53; pass int64 values as strings`);
      }
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value.map((item, i) => (item === undefined ? 'null' : encode(item, `${path}[${i}]`))).join(',')}]`;
      }
      if (!isPlainObject(value)) throw new TypeError(`canonicalJson: ${path} is not a plain object`);
      const record = value as Readonly<Record<string, unknown>>;
      const members = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort(compareCodePoints)
        .map((key) => `${JSON.stringify(key)}:${encode(record[key], `${path}.${key}`)}`);
      return `{${members.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: ${path} has unsupported type ${typeof value}`);
  }
}

/**
 * Serialises `value` canonically: object keys sorted by code point at every level (never insertion order),
 * no whitespace, strings escaped as JSON.stringify does (`"`, `\`, `\b\f\n\r\t`, other controls as `\u00XX`,
 * everything else raw), `undefined` members skipped, bigint as a decimal string. Rejects NaN, Infinity,
 * unsafe integers, functions, symbols and class instances, because each would make a digest ambiguous.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) === '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return encode(value, '$');
}
