// Which peers can overlap a policy's claims at all, without comparing it with every peer (issue 28, "Scale":
// conflict detection over every peer was O(N) per pass, O(N^2) per fleet creation). The decision stays in
// conflict.ts; this only narrows the peers it is given, and never drops one that could overlap.
import { serverAddress, type PolicyClaims } from './conflict.js';

/**
 * Peers' claims indexed by what an overlap needs in common: a role name (roles compete server-wide, and the
 * server is decided by identity or address, ADR 0027, so role names are not keyed by server) or a schema name
 * on a database of the same name (schemas compete on one database: same server and same database name).
 * A peer sharing neither with a policy has an empty overlap with it whatever the servers, so
 * {@link detectConflict} and {@link blockingClaims} over {@link ClaimIndex.candidates} equal them over all
 * peers. Identity does not change these keys: it may be added to the claims after the lookup.
 */
export class ClaimIndex<T> {
  private readonly entries = new Map<string, { readonly value: T; readonly keys: readonly string[] }>();
  private readonly byKey = new Map<string, Set<string>>();

  /** Peers indexed. */
  get size(): number {
    return this.entries.size;
  }

  /** Indexes (or re-indexes) the peer `claims.uid` with its claims; `value` is what lookups return. */
  set(claims: PolicyClaims, value: T): void {
    this.delete(claims.uid);
    const keys = keysOf(claims);
    this.entries.set(claims.uid, { value, keys });
    for (const key of keys) {
      let uids = this.byKey.get(key);
      if (uids === undefined) this.byKey.set(key, (uids = new Set()));
      uids.add(claims.uid);
    }
  }

  /** Forgets the peer `uid` (no-op when not indexed). */
  delete(uid: string): void {
    const entry = this.entries.get(uid);
    if (entry === undefined) return;
    this.entries.delete(uid);
    for (const key of entry.keys) {
      const uids = this.byKey.get(key);
      uids?.delete(uid);
      if (uids?.size === 0) this.byKey.delete(key);
    }
  }

  /** The peers (not `self`) sharing a role name, or a schema on a same-named database, with `self`. */
  candidates(self: PolicyClaims): T[] {
    const found = new Set<string>();
    for (const key of keysOf(self)) for (const uid of this.byKey.get(key) ?? []) found.add(uid);
    found.delete(self.uid);
    return [...found].map((uid) => this.entries.get(uid)!.value);
  }
}

/** Index keys of a claim set: its role names, and its schema names with the database name of its address. */
function keysOf(claims: PolicyClaims): readonly string[] {
  const database = claims.databaseKey.slice(serverAddress(claims.databaseKey).length);
  const keys = new Set<string>();
  for (const role of claims.roles) keys.add(`r\u0000${role}`);
  for (const schema of claims.schemas) keys.add(`s\u0000${database}\u0000${schema}`);
  return [...keys];
}
