import fc from 'fast-check';
import { compareCodePoints } from './canonical-order.js';

describe('compareCodePoints', () => {
  it('orders astral characters after the BMP private-use area, as UTF-8 bytes do', () => {
    const astral = '\u{1F600}';
    const bmpHigh = '\uFFFD';
    expect([astral, bmpHigh].sort(compareCodePoints)).toEqual([bmpHigh, astral]);
  });

  it('agrees with UTF-8 byte order for any pair of strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(bytes));
      }),
    );
  });

  it('agrees with whole-code-point comparison on any UTF-16 strings, lone surrogates included', () => {
    const reference = (a: string, b: string): number => {
      const left = Array.from(a).map((c) => c.codePointAt(0)!);
      const right = Array.from(b).map((c) => c.codePointAt(0)!);
      for (let i = 0; i < Math.min(left.length, right.length); i++) {
        if (left[i] !== right[i]) return left[i]! < right[i]! ? -1 : 1;
      }
      return Math.sign(left.length - right.length);
    };
    const units = fc.string({
      unit: fc.constantFrom('a', 'z', '\uFFFD', '\uD83D', '\uDE00', '\uD800', '\uDFFF', '\uE000'),
    });
    fc.assert(
      fc.property(units, units, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(reference(a, b));
      }),
      { numRuns: 2000 },
    );
  });
});
