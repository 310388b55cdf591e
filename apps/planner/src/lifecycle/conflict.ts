// Two policies claiming the same role or schema on one database: the later one (creationTimestamp,
// then namespace/name) yields with a Conflict condition and plans nothing, so the earlier keeps converging.

import { compareCodePoints } from '@rolepolicy/policy';

/** What one policy claims on one database (computed by the engine from the expanded policy). */
export interface PolicyClaims {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** RFC 3339 creation time; policies not yet created sort last. */
  readonly creationTimestamp: string | undefined;
  /** Key of the target database; two claims compete only when these are equal. */
  readonly databaseKey: string;
  readonly roles: readonly string[];
  readonly schemas: readonly string[];
}

/** An earlier policy this one overlaps with, and on what. */
export interface ConflictingPeer {
  readonly namespace: string;
  readonly name: string;
  readonly roles: readonly string[];
  readonly schemas: readonly string[];
}

/** Result of {@link detectConflict}. */
export type ConflictVerdict =
  | { readonly kind: 'clear' }
  | { readonly kind: 'conflict'; readonly peers: readonly ConflictingPeer[]; readonly message: string };

/** Total order "who came first": creation time, then namespace/name, then uid (for delete-and-recreate). */
export function compareSeniority(a: PolicyClaims, b: PolicyClaims): number {
  const ta = a.creationTimestamp === undefined ? Number.POSITIVE_INFINITY : Date.parse(a.creationTimestamp);
  const tb = b.creationTimestamp === undefined ? Number.POSITIVE_INFINITY : Date.parse(b.creationTimestamp);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (
    compareCodePoints(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`) ||
    compareCodePoints(a.uid, b.uid)
  );
}

function overlap(a: readonly string[], b: readonly string[]): readonly string[] {
  const set = new Set(b);
  return [...new Set(a.filter((x) => set.has(x)))].sort(compareCodePoints);
}

/**
 * Checks `self` against every other policy's claims. Only peers on the same database that are senior
 * to `self` can block it; a junior peer is the one that yields. Callers pass only peers whose spec is
 * valid (an invalid peer claims nothing).
 */
export function detectConflict(self: PolicyClaims, peers: readonly PolicyClaims[]): ConflictVerdict {
  const found: ConflictingPeer[] = [];
  const seniors = peers
    .filter((p) => p.uid !== self.uid && p.databaseKey === self.databaseKey && compareSeniority(p, self) < 0)
    .sort(compareSeniority);
  for (const peer of seniors) {
    const roles = overlap(self.roles, peer.roles);
    const schemas = overlap(self.schemas, peer.schemas);
    if (roles.length > 0 || schemas.length > 0) {
      found.push({ namespace: peer.namespace, name: peer.name, roles, schemas });
    }
  }
  if (found.length === 0) return { kind: 'clear' };
  const parts = found.map(
    (p) =>
      `${p.namespace}/${p.name} (roles: ${p.roles.join(', ') || '-'}; schemas: ${p.schemas.join(', ') || '-'})`,
  );
  return {
    kind: 'conflict',
    peers: found,
    message: `an earlier policy already manages these on the same database: ${parts.join('; ')}`,
  };
}
