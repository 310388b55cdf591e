// Map keys for grouping catalog rows: parts joined by NUL, which no PostgreSQL identifier can contain,
// so keys never collide and are far cheaper than JSON.stringify on large snapshots.

/** A grouping key of string parts; null is encoded apart from every string. */
export function keyOf(...parts: readonly (string | null)[]): string {
  return parts.map((part) => (part === null ? '\u0000N' : `\u0000S${part}`)).join('');
}
