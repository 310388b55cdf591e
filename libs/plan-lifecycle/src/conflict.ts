// Two policies claiming the same schema on one database, or the same role on one server (roles are
// server-wide: every database of a PostgreSQL server shares them): the later one (creationTimestamp, then
// namespace/name) yields with a Conflict condition and plans nothing, so the earlier keeps converging.

import { compareCodePoints } from '@rolepolicy/policy';

/** What one policy claims on one database (computed by the engine from the expanded policy). */
export interface PolicyClaims {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** RFC 3339 creation time; policies not yet created sort last. */
  readonly creationTimestamp: string | undefined;
  /**
   * Address of the target database, `host:port/dbname`: schema claims compete on one database, role claims
   * on one server (the `host:port` part, or the physical identity below when both sides have one).
   */
  readonly databaseKey: string;
  /**
   * The server's `system_identifier`, when this planner read it through the claim's current connection
   * (ADR 0027). Two claims that both carry one are on one server exactly when these are equal, whatever
   * host names they connect with; otherwise the `host:port` of their addresses decides.
   */
  readonly serverIdentity?: string | null;
  readonly roles: readonly string[];
  /**
   * The roles of `roles` declared `external` (referenced, never created, altered or dropped). They still
   * compete on one database; across the databases of a server only managed roles do (ADR 0027).
   */
  readonly externalRoles?: readonly string[];
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

/** `host:port` of a `host:port/dbname` address (the whole key when it has no database part). */
export function serverAddress(databaseKey: string): string {
  const slash = databaseKey.indexOf('/');
  return slash < 0 ? databaseKey : databaseKey.slice(0, slash);
}

/** Whether two claims target one PostgreSQL server: by physical identity when both have one, else by address. */
export function sameServer(a: PolicyClaims, b: PolicyClaims): boolean {
  if (a.serverIdentity && b.serverIdentity) return a.serverIdentity === b.serverIdentity;
  return serverAddress(a.databaseKey) === serverAddress(b.databaseKey);
}

/** Whether two claims target one database: one server (above) and the same database name. */
export function sameDatabase(a: PolicyClaims, b: PolicyClaims): boolean {
  if (a.databaseKey === b.databaseKey) return true;
  const name = (key: string) => key.slice(serverAddress(key).length);
  return sameServer(a, b) && name(a.databaseKey) === name(b.databaseKey);
}

/**
 * What `peer` claims of `self`'s: roles anywhere on the same server, schemas only on the same database.
 * Empty lists when they are on different servers.
 */
function overlapOf(
  self: PolicyClaims,
  peer: PolicyClaims,
): { readonly roles: readonly string[]; readonly schemas: readonly string[] } {
  if (!sameServer(self, peer)) return { roles: [], schemas: [] };
  if (sameDatabase(self, peer)) {
    return { roles: overlap(self.roles, peer.roles), schemas: overlap(self.schemas, peer.schemas) };
  }
  // Another database of the server: a role both reference as external is managed by neither.
  return { roles: overlap(managedRoles(self), managedRoles(peer)), schemas: [] };
}

function managedRoles(claims: PolicyClaims): readonly string[] {
  const external = new Set(claims.externalRoles ?? []);
  return external.size === 0 ? claims.roles : claims.roles.filter((r) => !external.has(r));
}

function overlap(a: readonly string[], b: readonly string[]): readonly string[] {
  const set = new Set(b);
  return [...new Set(a.filter((x) => set.has(x)))].sort(compareCodePoints);
}

/**
 * The peers that would make `self` yield: senior to it, and claiming one of its roles on the same server or
 * one of its schemas on the same database (oldest first). The reconciler asks these for proof that their connection reached the
 * database before they count (ADR 0024).
 */
export function blockingClaims(self: PolicyClaims, peers: readonly PolicyClaims[]): readonly PolicyClaims[] {
  return peers
    .filter((p) => p.uid !== self.uid && compareSeniority(p, self) < 0)
    .filter((p) => {
      const found = overlapOf(self, p);
      return found.roles.length > 0 || found.schemas.length > 0;
    })
    .sort(compareSeniority);
}

const listed = (names: readonly string[]): string => names.join(', ') || '-';

/**
 * Checks `self` against every other policy's claims. Only peers senior to `self` that claim one of its roles
 * on the same server, or one of its schemas on the same database, can block it; a junior peer is the one that yields. Callers pass only peers whose spec is
 * valid and whose connection reached the database (an invalid or unproven peer claims nothing). A peer of
 * another namespace is never named: the message says only that another namespace claims these.
 */
export function detectConflict(self: PolicyClaims, peers: readonly PolicyClaims[]): ConflictVerdict {
  const found: ConflictingPeer[] = [];
  const elsewhere = { roles: new Set<string>(), schemas: new Set<string>() };
  let serverWide = false;
  for (const peer of blockingClaims(self, peers)) {
    const { roles, schemas } = overlapOf(self, peer);
    if (!sameDatabase(self, peer)) serverWide = true;
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
    // A peer on another database of the server can only overlap on roles, which are server-wide.
    message: serverWide
      ? `an earlier policy already manages these roles on the same PostgreSQL server (roles are server-wide): ${parts.join('; ')}`
      : `an earlier policy already manages these on the same database: ${parts.join('; ')}`,
  };
}
