// Conflict claims of peer policies, read through the same Secret reads as a pass. Only their non-secret parts
// are remembered (database address, roles, schemas, a keyed digest of the connection), keyed by the Secret
// versions they were read at.
import { SecretAccessError, type SecretReader } from '@rolepolicy/contracts';
import { readPolicySecrets, secretsNamedBy, type PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { connectionDigest, type PeerClaim } from './connection-digest.js';
import { peerClaims } from '../planning/prepare.js';

/**
 * Conflict claims of peer policies. A peer's claims need its connection's database address, which can sit
 * in a Secret; the address is read once per (peer generation, connection, Secret versions) and remembered
 * without any value.
 */
export class PeerClaims {
  // The read of a peer is shared by every pass that needs it while it runs: with N policies created at
  // once, N concurrent passes each needing the N-1 peers would otherwise read N^2 Secrets.
  private readonly known = new Map<string, { key: string; claims: Promise<PeerClaim | null> }>();
  /**
   * The Secret names of each peer by generation: naming them expands the peer's policy, and every pass
   * asks about every peer (500 policies created together spent minutes of planner CPU expanding peers).
   */
  private readonly named = new Map<
    string,
    { generation: number; named: ReturnType<typeof secretsNamedBy> }
  >();

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
    const pending: Promise<PeerClaim | null>[] = [];
    // The asking policy is a peer of every other one: what is remembered about it must survive its own pass
    // (forgetting it made every other policy's next pass read its Secrets again: N^2 reads in a fleet).
    const live = new Set<string>([self]);
    for (const peer of peers) {
      live.add(peer.metadata.uid);
      const named = this.namedBy(peer);
      // The generation covers the connection (any spec change raises it); names and versions cover the Secrets.
      let key = String(peer.metadata.generation);
      for (const n of named.names) key += `\u0000${n}\u0000${this.versionOf(peer.metadata.namespace, n)}`;
      let entry = this.known.get(peer.metadata.uid);
      if (entry === undefined || entry.key !== key) {
        const uid = peer.metadata.uid;
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
        const created = { key, claims };
        entry = created;
        this.known.set(uid, created);
        // A failed read is not remembered: the next pass reads again.
        claims.catch(() => {
          if (this.known.get(uid) === created) this.known.delete(uid);
        });
      }
      pending.push(entry.claims);
    }
    for (const uid of this.known.keys()) if (!live.has(uid)) this.known.delete(uid);
    for (const uid of this.named.keys()) if (!live.has(uid)) this.named.delete(uid);
    // All reads in flight at once (one gateway round trip, not one per peer).
    return (await Promise.all(pending)).filter((c): c is PeerClaim => c !== null);
  }

  private namedBy(peer: PostgresPolicy): ReturnType<typeof secretsNamedBy> {
    const known = this.named.get(peer.metadata.uid);
    if (known !== undefined && known.generation === peer.metadata.generation) return known.named;
    const named = secretsNamedBy(peer);
    this.named.set(peer.metadata.uid, { generation: peer.metadata.generation, named });
    return named;
  }
}
