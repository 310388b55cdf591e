// One string order for everything the engine sorts (SQL order, digests, graph ids).
// JavaScript's default sort compares UTF-16 code units, which misorders astral characters;
// code-point order equals UTF-8 byte order, which is what the digests and renderer rely on.

function isSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** Reference comparison over whole code points (used only from the first surrogate difference on). */
function compareFromCodePoints(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const x = left[i]!.codePointAt(0)!;
    const y = right[i]!.codePointAt(0)!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return left.length - right.length;
}

/**
 * Compares two strings by Unicode code point (equivalently by UTF-8 bytes).
 * Walks UTF-16 units without allocating (sorting thousands of keys is hot); only when the first difference
 * involves a surrogate does it fall back to whole code points from the last shared boundary.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (!isSurrogate(x) && !isSurrogate(y)) return x < y ? -1 : 1;
    // A shared high surrogate just before i pairs differently in the two strings: restart there.
    const start = i > 0 && isHighSurrogate(a.charCodeAt(i - 1)) ? i - 1 : i;
    return compareFromCodePoints(a.slice(start), b.slice(start));
  }
  return a.length - b.length;
}
