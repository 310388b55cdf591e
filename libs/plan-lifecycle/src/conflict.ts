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

/** An earlier policy of the same namespace this one overlaps with, and on what. */
export interface ConflictingPeer {
  readonly namespace: string;
  readonly name: string;
  readonly roles: readonly string[];
  readonly schemas: readonly string[];
}

/** Result of {@link detectConflict}. */
export type ConflictVerdict =
  | { readonly kind: 'clear' }
  | {
      readonly kind: 'conflict';
      /** Earlier policies of the asking policy's namespace, named (its readers may read them anyway). */
      readonly peers: readonly ConflictingPeer[];
      /**
       * What earlier policies of other namespaces claim of this one's roles and schemas, merged and never
       * named (ADR 0024); absent or null when none does.
       */
      readonly otherNamespaces?: {
        readonly roles: readonly string[];
        readonly schemas: readonly string[];
      } | null;
      readonly message: string;
    };

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
 * The peers that would make `self` yield: on the same database, senior to it, and claiming one of its
 * roles or schemas (oldest first). The reconciler asks these for proof that their connection reached the
 * database before they count (ADR 0024).
 */
export function blockingClaims(self: PolicyClaims, peers: readonly PolicyClaims[]): readonly PolicyClaims[] {
  return peers
    .filter((p) => p.uid !== self.uid && p.databaseKey === self.databaseKey && compareSeniority(p, self) < 0)
    .filter((p) => overlap(self.roles, p.roles).length > 0 || overlap(self.schemas, p.schemas).length > 0)
    .sort(compareSeniority);
}

const listed = (names: readonly string[]): string => names.join(', ') || '-';

/**
 * Checks `self` against every other policy's claims. Only peers on the same database that are senior
 * to `self` can block it; a junior peer is the one that yields. Callers pass only peers whose spec is
 * valid and whose connection reached the database (an invalid or unproven peer claims nothing). A peer of
 * another namespace is never named: the message says only that another namespace claims these.
 */
export function detectConflict(self: PolicyClaims, peers: readonly PolicyClaims[]): ConflictVerdict {
  const found: ConflictingPeer[] = [];
  const elsewhere = { roles: new Set<string>(), schemas: new Set<string>() };
  for (const peer of blockingClaims(self, peers)) {
    const roles = overlap(self.roles, peer.roles);
    const schemas = overlap(self.schemas, peer.schemas);
    if (peer.namespace === self.namespace) {
      found.push({ namespace: peer.namespace, name: peer.name, roles, schemas });
    } else {
      for (const r of roles) elsewhere.roles.add(r);
      for (const s of schemas) elsewhere.schemas.add(s);
    }
  }
  const otherNamespaces =
    elsewhere.roles.size + elsewhere.schemas.size === 0
      ? null
      : {
          roles: [...elsewhere.roles].sort(compareCodePoints),
          schemas: [...elsewhere.schemas].sort(compareCodePoints),
        };
  if (found.length === 0 && otherNamespaces === null) return { kind: 'clear' };
  const parts = found.map(
    (p) => `${p.namespace}/${p.name} (roles: ${listed(p.roles)}; schemas: ${listed(p.schemas)})`,
  );
  if (otherNamespaces !== null) {
    parts.push(
      `a policy in another namespace (roles: ${listed(otherNamespaces.roles)}; schemas: ${listed(otherNamespaces.schemas)})`,
    );
  }
  return {
    kind: 'conflict',
    peers: found,
    otherNamespaces,
    message: `an earlier policy already manages these on the same database: ${parts.join('; ')}`,
  };
}
