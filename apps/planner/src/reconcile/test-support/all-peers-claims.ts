// The oracle of peer-claims.spec: PeerClaims as it was before the cache's changes told it which peers to
// check (issue 28), given every live peer on every pass and checking each one's generation and Secret versions.
import { SecretAccessError, type SecretReader } from '@rolepolicy/contracts';
import {
  ClaimIndex,
  readPolicySecrets,
  secretsNamedBy,
  type PolicyClaims,
  type PostgresPolicy,
} from '@rolepolicy/plan-lifecycle';
import { connectionDigest, type PeerClaim } from '../connection-digest.js';
import { peerClaims } from '../../planning/prepare.js';

/** One peer's read: what it was read at (generation, Secret names and versions) and its claims. */
interface Known {
  readonly generation: number;
  readonly names: readonly string[];
  readonly versions: readonly string[];
  readonly claims: Promise<PeerClaim | null>;
  /** The read answered (its claims, if any, are in the index). */
  settled: boolean;
  /** The last refresh that saw the peer. */
  seen: number;
}

/**
 * Conflict claims of peer policies. A peer's claims need its connection's database address, which can sit
 * in a Secret; the address is read once per (peer generation, connection, Secret versions) and remembered
 * without any value.
 */
export class AllPeersClaims {
  // The read of a peer is shared by every pass that needs it while it runs: with N policies created at
  // once, N concurrent passes each needing the N-1 peers would otherwise read N^2 Secrets.
  private readonly known = new Map<string, Known>();
  /**
   * The last answered claims of each known peer, by role name and by schema on a database name: a pass
   * compares its policy only with the peers that can overlap it, not with all N (issue 28, "Scale").
   */
  private readonly index = new ClaimIndex<PeerClaim>();
  private refreshes = 0;

  constructor(
    private readonly reader: SecretReader,
    /** resourceVersion of a Secret as the resource stream last showed it ('' when unknown). */
    private readonly versionOf: (namespace: string, name: string) => string,
  ) {}

  /**
   * Claims of every peer that resolves (`self`: the asking policy's uid); throws SecretAccessError when a read
   * goes unanswered (a refused one claims nothing).
   */
  async of(peers: readonly PostgresPolicy[], self: string): Promise<PeerClaim[]> {
    const pending = this.refresh(peers, self).map((read) => read.claims);
    // All reads in flight at once (one gateway round trip, not one per peer).
    return (await Promise.all(pending)).filter((c): c is PeerClaim => c !== null);
  }

  /**
   * Claims of the peers that can overlap `self` (a superset of those that do: same verdict as {@link of}'s
   * claims, ClaimIndex). Waits only for reads that have not answered yet; throws as {@link of} does.
   */
  async overlapping(peers: readonly PostgresPolicy[], self: PolicyClaims): Promise<PeerClaim[]> {
    const pending: Promise<PeerClaim | null>[] = [];
    for (const read of this.refresh(peers, self.uid)) if (!read.settled) pending.push(read.claims);
    if (pending.length > 0) await Promise.all(pending);
    return this.index.candidates(self);
  }

  /**
   * Starts a read for every peer whose generation or Secret versions moved since its last read, and forgets
   * gone peers. Returns the current read of each peer, in order. Checking a peer is a few map lookups:
   * nothing is built for a peer that did not change.
   */
  private refresh(peers: readonly PostgresPolicy[], self: string): Known[] {
    // Synchronous, so a refresh's stamp marks exactly the peers it saw, whatever other passes interleave.
    const stamp = ++this.refreshes;
    const reads: Known[] = [];
    for (const peer of peers) {
      const known = this.known.get(peer.metadata.uid);
      const read = known !== undefined && this.current(known, peer) ? known : this.read(peer);
      read.seen = stamp;
      reads.push(read);
    }
    // The asking policy is a peer of every other one: what is remembered about it must survive its own pass
    // (forgetting it made every other policy's next pass read its Secrets again: N^2 reads in a fleet).
    // Every peer seen has an entry now, so only more entries than peers (and self) can include a gone one.
    if (this.known.size > reads.length + (this.known.has(self) ? 1 : 0)) {
      for (const [uid, known] of this.known) {
        if (uid !== self && known.seen !== stamp) {
          this.known.delete(uid);
          this.index.delete(uid);
        }
      }
    }
    return reads;
  }

  /** Whether `known` was read at the peer's generation and its Secrets' current versions. */
  private current(known: Known, peer: PostgresPolicy): boolean {
    // The generation covers the connection (any spec change raises it); names and versions cover the Secrets.
    if (known.generation !== peer.metadata.generation) return false;
    for (let i = 0; i < known.names.length; i++) {
      if (this.versionOf(peer.metadata.namespace, known.names[i]!) !== known.versions[i]) return false;
    }
    return true;
  }

  /** Reads the peer's Secrets and resolves its claims; the index keeps its previous claims until then. */
  private read(peer: PostgresPolicy): Known {
    const uid = peer.metadata.uid;
    const names = secretsNamedBy(peer).names;
    // Only the digest of the connection is kept: it tells whether a proof still holds (ADR 0024).
    const claims = readPolicySecrets(this.reader, peer).then(
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
    const created: Known = {
      generation: peer.metadata.generation,
      names,
      versions: names.map((n) => this.versionOf(peer.metadata.namespace, n)),
      claims,
      settled: false,
      seen: 0,
    };
    this.known.set(uid, created);
    claims.then(
      (claim) => {
        created.settled = true;
        if (this.known.get(uid) !== created) return;
        if (claim === null) this.index.delete(uid);
        else this.index.set(claim.claims, claim);
      },
      () => {
        // A failed read is not remembered: the next pass reads again.
        if (this.known.get(uid) !== created) return;
        this.known.delete(uid);
        this.index.delete(uid);
      },
    );
    return created;
  }
}
