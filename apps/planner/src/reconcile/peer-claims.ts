// Conflict claims of peer policies, read through the same Secret reads as a pass. Only their non-secret parts
// are remembered (database address, roles, schemas, a keyed digest of the connection), keyed by the Secret
// versions they were read at, and indexed by what an overlap needs in common (ClaimIndex, issue 28). Which
// peers to check is told by the cache's changes, so a pass costs O(changed + overlapping peers), not O(all).
import { SecretAccessError, type ResourceCache, type SecretReader } from '@rolepolicy/contracts';
import {
  cachedPolicy,
  ClaimIndex,
  readPolicySecrets,
  secretsNamedBy,
  type PolicyClaims,
  type PostgresPolicy,
} from '@rolepolicy/plan-lifecycle';
import { connectionDigest, type PeerClaim } from './connection-digest.js';
import { peerClaims } from '../planning/prepare.js';

/** One peer's read: what it was read at (uid, generation, Secret names and versions) and its claims. */
interface Known {
  readonly uid: string;
  readonly generation: number;
  readonly names: readonly string[];
  readonly versions: readonly string[];
  readonly claims: Promise<PeerClaim | null>;
  /** The read failed: the peer is marked, and read again at the next pass. */
  failed: boolean;
}

/** Where PeerClaims looks peers up; `policyAt` answers null for an absent, deleting or unreadable policy. */
export interface PeerSource {
  readonly reader: SecretReader;
  /** The live policy at `namespace/name` as the cache holds it now (null: none, or being deleted). */
  readonly policyAt: (key: string) => PostgresPolicy | null;
  /** resourceVersion of a Secret as the resource stream last showed it ('' when unknown). */
  readonly versionOf: (namespace: string, name: string) => string;
  /** A peer is gone (deleted, or its name now holds another uid): what is remembered of it can go. */
  readonly onGone?: (uid: string) => void;
}

/**
 * Conflict claims of peer policies. A peer's claims need its connection's database address, which can sit
 * in a Secret; the address is read once per (peer generation, connection, Secret versions) and remembered
 * without any value. The reconciler reports every policy and Secret change ({@link policyChanged},
 * {@link secretChanged}); a pass re-checks only the peers those changes marked. A change reported while no
 * pass runs stays marked until the next one, so no change is missed (a missed one could hide a conflict).
 */
export class PeerClaims {
  /** Policy key (`namespace/name`) -> its current read, shared by every pass that needs it. */
  private readonly known = new Map<string, Known>();
  /** Reads not answered yet, by policy key: a pass waits only for these. */
  private readonly unsettled = new Map<string, Known>();
  /** Policy keys a change concerned since the last pass: only these are checked. */
  private readonly marked = new Set<string>();
  /** Secret key (`namespace/name`) -> keys of the policies whose current read named it. */
  private readonly readers = new Map<string, Set<string>>();
  /**
   * The last answered claims of each known peer, by role name and by schema on a database name: a pass
   * compares its policy only with the peers that can overlap it, not with all N (issue 28, "Scale").
   */
  private readonly index = new ClaimIndex<PeerClaim>();

  constructor(private readonly source: PeerSource) {}

  /** The policy at `key` was created, changed or deleted (or is there at start): checked at the next pass. */
  policyChanged(key: string): void {
    this.marked.add(key);
  }

  /** A Secret changed: the policies whose read named it are checked at the next pass. */
  secretChanged(namespace: string, name: string): void {
    for (const key of this.readers.get(`${namespace}/${name}`) ?? []) this.marked.add(key);
  }

  /** The live policy whose claims these are (undefined once it is gone or its name holds another uid). */
  policyOf(claims: PolicyClaims): PostgresPolicy | undefined {
    const live = this.source.policyAt(`${claims.namespace}/${claims.name}`);
    return live?.metadata.uid === claims.uid ? live : undefined;
  }

  /**
   * Claims of the peers that can overlap `self` (a superset of those that do: same verdict as all peers'
   * claims, ClaimIndex). Waits only for reads that have not answered yet; throws SecretAccessError when a
   * read goes unanswered (a refused one claims nothing).
   */
  async overlapping(self: PolicyClaims): Promise<PeerClaim[]> {
    this.checkMarked();
    const pending: Promise<PeerClaim | null>[] = [];
    for (const read of this.unsettled.values()) if (read.uid !== self.uid) pending.push(read.claims);
    // All reads in flight at once (one gateway round trip, not one per peer).
    if (pending.length > 0) await Promise.all(pending);
    return this.index.candidates(self);
  }

  /**
   * Starts a read for every marked peer whose uid, generation or Secret versions moved since its last read,
   * and forgets marked peers that are gone. Synchronous: a pass sees every change reported before it.
   */
  private checkMarked(): void {
    for (const key of this.marked) {
      const peer = this.source.policyAt(key);
      const known = this.known.get(key);
      if (known !== undefined && (peer === null || known.uid !== peer.metadata.uid)) this.forget(key, known);
      if (peer !== null && (known === undefined || !this.current(known, peer))) this.read(key, peer);
    }
    this.marked.clear();
  }

  /** Whether `known` was read for this peer, at its generation and its Secrets' current versions. */
  private current(known: Known, peer: PostgresPolicy): boolean {
    // The generation covers the connection (any spec change raises it); names and versions cover the Secrets.
    if (known.failed || known.uid !== peer.metadata.uid || known.generation !== peer.metadata.generation)
      return false;
    for (let i = 0; i < known.names.length; i++) {
      if (this.source.versionOf(peer.metadata.namespace, known.names[i]!) !== known.versions[i]) return false;
    }
    return true;
  }

  private forget(key: string, known: Known): void {
    this.setReader(key, known, undefined);
    this.known.delete(key);
    this.unsettled.delete(key);
    this.index.delete(known.uid);
    this.source.onGone?.(known.uid);
  }

  /** Keeps the Secret -> reader index on the names of the policy's current read. */
  private setReader(key: string, before: Known | undefined, after: Known | undefined): void {
    const namespace = key.slice(0, key.indexOf('/'));
    for (const name of before?.names ?? []) {
      const secret = `${namespace}/${name}`;
      const keys = this.readers.get(secret);
      keys?.delete(key);
      if (keys?.size === 0) this.readers.delete(secret);
    }
    for (const name of after?.names ?? []) {
      const secret = `${namespace}/${name}`;
      let keys = this.readers.get(secret);
      if (keys === undefined) this.readers.set(secret, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Reads the peer's Secrets and resolves its claims; the index keeps its previous claims until then. */
  private read(key: string, peer: PostgresPolicy): void {
    const { uid, namespace, generation } = peer.metadata;
    const names = secretsNamedBy(peer).names;
    // Only the digest of the connection is kept: it tells whether a proof still holds (ADR 0024).
    const claims = readPolicySecrets(this.source.reader, peer).then(
      (secrets) => {
        const resolved = peerClaims(secrets.policy, secrets.lookup);
        return resolved && { claims: resolved.claims, connection: connectionDigest(resolved.connection) };
      },
      (error: unknown) => {
        // A refused read (SECRET_READ_POLICY=labelled and an unlabelled Secret, ADR 0018) leaves the peer
        // unable to reconcile, so it claims nothing; failing here would let one tenant's policy stop
        // every other one. An unanswered read still fails the pass (retried).
        if (error instanceof SecretAccessError && !error.transient) return null;
        throw error;
      },
    );
    const versions = names.map((n) => this.source.versionOf(namespace, n));
    const created: Known = { uid, generation, names, versions, claims, failed: false };
    this.setReader(key, this.known.get(key), created);
    this.known.set(key, created);
    this.unsettled.set(key, created);
    claims.then(
      (claim) => {
        if (this.known.get(key) !== created) return;
        this.unsettled.delete(key);
        if (claim === null) this.index.delete(uid);
        else this.index.set(claim.claims, claim);
      },
      () => {
        // A failed read is not trusted: the peer is marked again, so the next pass reads it again.
        if (this.known.get(key) !== created) return;
        created.failed = true;
        this.unsettled.delete(key);
        this.index.delete(uid);
        this.marked.add(key);
      },
    );
  }
}

/** The policy at `namespace/name` as the cache holds it, unless absent, unreadable or being deleted. */
export function livePolicyAt(cache: Pick<ResourceCache, 'get'>, key: string): PostgresPolicy | null {
  const [namespace = '', name = ''] = key.split('/');
  const object = cache.get('postgrespolicy', namespace, name);
  const policy = object === undefined ? null : cachedPolicy(object);
  return policy !== null && policy.metadata.deletionTimestamp === undefined ? policy : null;
}
