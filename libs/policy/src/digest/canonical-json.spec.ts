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
