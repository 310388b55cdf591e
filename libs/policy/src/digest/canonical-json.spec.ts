import fc from 'fast-check';
import { compareCodePoints } from '../canonical-order.js';
import { canonicalJson } from './canonical-json.js';

// JSON values as policy content holds them: safe integers only (int64 travels as strings).
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ unit: 'grapheme' }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'grapheme' }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('canonicalJson', () => {
  it('sorts keys by byte order at every level, never insertion order', () => {
    expect(canonicalJson({ b: { z: 1, a: 2 }, a: [{ y: true, x: null }] })).toBe(
      '{"a":[{"x":null,"y":true}],"b":{"a":2,"z":1}}',
    );
  });

  it('orders astral-plane keys after BMP keys, as UTF-8 bytes do (UTF-16 sort would not)', () => {
    expect(canonicalJson({ '\u{1F600}': 1, '\uFFFD': 2 })).toBe('{"\uFFFD":2,"\u{1F600}":1}');
  });

  it('escapes strings as JSON.stringify does: quotes, backslashes, controls; other characters raw', () => {
    expect(canonicalJson('a"b\\c\n\u0001é\u{1F600}')).toBe('"a\\"b\\\\c\\n\\u0001é\u{1F600}"');
  });

  it('encodes int64 values given as bigint as decimal strings and rejects unsafe integers', () => {
    expect(canonicalJson({ id: 7412330000000000001n })).toBe('{"id":"7412330000000000001"}');
    expect(() => canonicalJson({ id: 2 ** 53 + 2 })).toThrow(TypeError);
  });

  it('rejects values that would make a digest ambiguous', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(TypeError);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(TypeError);
  });

  it('skips undefined members and has no whitespace', () => {
    expect(canonicalJson({ a: undefined, b: [1, 2] })).toBe('{"b":[1,2]}');
  });

  it('is independent of key insertion order and parses back to the same value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), json), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        const text = canonicalJson(record);
        expect(canonicalJson(reversed)).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });
});

// The encoder as first written: a path string per value, filter/sort/map per object. Kept as the reference
// the optimised encoder must match byte for byte (every digest in the project hashes these bytes).
function referenceCanonicalJson(value: unknown): string {
  const encode = (v: unknown, path: string): string => {
    if (v === null) return 'null';
    switch (typeof v) {
      case 'boolean':
        return v ? 'true' : 'false';
      case 'string':
        return JSON.stringify(v);
      case 'bigint':
        return JSON.stringify(v.toString());
      case 'number':
        if (!Number.isFinite(v)) throw new TypeError(`canonicalJson: ${path} is not a finite number`);
        if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
          throw new TypeError(
            `canonicalJson: ${path} is an integer beyond 2^53; pass int64 values as strings`,
          );
        }
        return JSON.stringify(v);
      case 'object': {
        if (Array.isArray(v)) {
          return `[${v.map((item, i) => (item === undefined ? 'null' : encode(item, `${path}[${i}]`))).join(',')}]`;
        }
        const proto: unknown = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) {
          throw new TypeError(`canonicalJson: ${path} is not a plain object`);
        }
        const record = v as Readonly<Record<string, unknown>>;
        const members = Object.keys(record)
          .filter((key) => record[key] !== undefined)
          .sort(compareCodePoints)
          .map((key) => `${JSON.stringify(key)}:${encode(record[key], `${path}.${key}`)}`);
        return `{${members.join(',')}}`;
      }
      default:
        throw new TypeError(`canonicalJson: ${path} has unsupported type ${typeof v}`);
    }
  };
  return encode(value, '$');
}

/** The outcome of an encoder: its text, or the TypeError message it threw. */
function outcome(encoder: (value: unknown) => string, value: unknown): string {
  try {
    return `ok ${encoder(value)}`;
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return `TypeError ${error.message}`;
  }
}

// Keys that exercise the order: astral characters, lone surrogates, BMP characters above the surrogates,
// escapes, and keys that look like array indices or paths (V8 keeps integer-like keys first).
const key = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 3 }),
  fc.constantFrom(
    '\u{1F600}',
    '\uFFFD',
    '\uD800',
    '\uDC00',
    '\uE000',
    '0',
    '10',
    '2',
    'a.b',
    '[0]',
    '"',
    '__proto__',
  ),
);
// Anything canonicalJson may be handed, accepted or not: undefined members, bigint, unsafe and non-finite
// numbers, class instances, functions and symbols, at any depth.
const anything: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(2 ** 53, -(2 ** 60), Number.NaN, Number.POSITIVE_INFINITY, -0),
    fc.bigInt(),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }),
    // Every character class JSON.stringify treats apart: controls, quote, backslash, DEL, U+2028, lone and
    // paired surrogates, in strings of them.
    fc
      .array(
        fc.constantFrom(
          '\u0000',
          '\u001f',
          '\u007f',
          '\u2028',
          '\uD800',
          '\uDFFF',
          '\u{1F600}',
          '"',
          '\\',
          'a',
          'é',
        ),
        {
          maxLength: 4,
        },
      )
      .map((parts) => parts.join('')),
    fc.constantFrom<unknown>(new Date(0), new Map(), () => 1, Symbol('s')),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(key, tie('value'), { maxKeys: 6 }),
    fc
      .dictionary(key, tie('value'), { maxKeys: 3 })
      .map((d) => Object.assign(Object.create(null) as object, d)),
    fc.dictionary(key, tie('value'), { minKeys: 17, maxKeys: 24, depthIdentifier: 'wide' }),
  ),
})).value;

describe('canonicalJson against the reference encoder', () => {
  it('produces the same bytes, or the same TypeError message, for any value', () => {
    fc.assert(
      fc.property(anything, (value) => {
        expect(outcome(canonicalJson, value)).toBe(outcome(referenceCanonicalJson, value));
      }),
      { numRuns: 3000 },
    );
  });

  it('names the path of the first rejected value in key order', () => {
    const value = { b: [1, { c: Number.NaN }], a: { 'x.y': [0, 2 ** 60] } };
    expect(() => canonicalJson(value)).toThrow(
      new TypeError('canonicalJson: $.a.x.y[1] is an integer beyond 2^53; pass int64 values as strings'),
    );
    expect(() => canonicalJson({ z: [undefined, new Date(0)] })).toThrow(
      new TypeError('canonicalJson: $.z[1] is not a plain object'),
    );
    expect(() => canonicalJson({ f: Symbol('s') })).toThrow(
      new TypeError('canonicalJson: $.f has unsupported type symbol'),
    );
    expect(() => canonicalJson(undefined)).toThrow(
      new TypeError('canonicalJson: $ has unsupported type undefined'),
    );
    expect(() => canonicalJson([Number.NEGATIVE_INFINITY])).toThrow(
      new TypeError('canonicalJson: $[0] is not a finite number'),
    );
  });

  it('takes a memo hit verbatim and encodes everything around it', () => {
    const shared = { b: 1, a: [2n, 'x'] };
    const memo = new WeakMap<object, string>([[shared, referenceCanonicalJson(shared)]]);
    const document = { outer: shared, list: [shared, { shared }] };
    expect(canonicalJson(document, memo)).toBe(referenceCanonicalJson(document));
    // The memo is trusted: a stale entry shows up verbatim (so callers may only memoise values they own).
    expect(canonicalJson({ k: shared }, new WeakMap([[shared, '"stale"']]))).toBe('{"k":"stale"}');
    // A rejection past a memo hit names its own path, not the hit's.
    const date = new Date(0);
    expect(() => canonicalJson({ a: date, b: Number.NaN }, new WeakMap([[date, '"d"']]))).toThrow(
      new TypeError('canonicalJson: $.b is not a finite number'),
    );
  });
});

describe('compareCodePoints (the comparator canonical JSON sorts with)', () => {
  const decoded = (a: string, b: string): number => {
    const left = Array.from(a, (c) => c.codePointAt(0)!);
    const right = Array.from(b, (c) => c.codePointAt(0)!);
    for (let i = 0; i < Math.min(left.length, right.length); i++) {
      if (left[i] !== right[i]) return left[i]! < right[i]! ? -1 : 1;
    }
    return left.length - right.length;
  };

  it('agrees with code-point order for any strings, lone surrogates and unit prefixes included', () => {
    const unit = fc.oneof(
      fc.constantFrom(
        'a',
        'z',
        '\uD800',
        '\uDBFF',
        '\uDC00',
        '\uDFFF',
        '\uE000',
        '\uFFFF',
        '\u{1F600}',
        '\u{10000}',
      ),
      fc.string({ unit: 'binary', maxLength: 1 }),
    );
    const str = fc.array(unit, { maxLength: 6 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(str, str, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(decoded(a, b)));
      }),
      { numRuns: 2000 },
    );
  });
});
