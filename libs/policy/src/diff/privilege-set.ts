// Privilege sets as canonically sorted, duplicate-free arrays (computed through 12-bit masks).
// Every set the diff emits goes through here, so rendered lists and digests never depend on input order.

import { PRIVILEGES, type Privilege } from '../model/vocabulary.js';

const BIT = new Map<Privilege, number>(PRIVILEGES.map((p, i) => [p, 1 << i]));
// One shared, canonical array per mask: set operations run per key at the spec's bounds, so no sorting.
const BY_MASK: (readonly Privilege[] | undefined)[] = [];

function mask(privileges: Iterable<Privilege>): number {
  let m = 0;
  for (const p of privileges) m |= BIT.get(p) ?? 0;
  return m;
}

function fromMask(m: number): readonly Privilege[] {
  const cached = BY_MASK[m];
  if (cached !== undefined) return cached;
  const out = Object.freeze(PRIVILEGES.filter((_, i) => (m & (1 << i)) !== 0));
  BY_MASK[m] = out;
  return out;
}

/** Sorts and de-duplicates privileges into canonical (SQL spelling) order. */
export function privilegeSet(privileges: Iterable<Privilege>): readonly Privilege[] {
  return fromMask(mask(privileges));
}

/** `a ∪ b`, canonical. */
export function union(a: readonly Privilege[], b: readonly Privilege[]): readonly Privilege[] {
  return fromMask(mask(a) | mask(b));
}

/** `a − b`, canonical. */
export function minus(a: readonly Privilege[], b: readonly Privilege[]): readonly Privilege[] {
  return fromMask(mask(a) & ~mask(b));
}

/** `a ∩ b`, canonical. */
export function intersect(a: readonly Privilege[], b: readonly Privilege[]): readonly Privilege[] {
  return fromMask(mask(a) & mask(b));
}

/** True when both sets hold the same privileges. */
export function samePrivileges(a: readonly Privilege[], b: readonly Privilege[]): boolean {
  return mask(a) === mask(b);
}
