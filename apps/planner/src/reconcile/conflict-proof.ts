// Conflict claims count only with proof (ADR 0024): a policy's claim on a database makes another policy yield
// only once this planner saw the claim's own connection open a session there and read the target's identity.
// The physical identity read then tells which claims share a server, where roles compete (ADR 0027).
import type { NatsConnection } from '@nats-io/transport-node';
import { managedScopePayload, SecretAccessError } from '@rolepolicy/contracts';
import type { ResolvedConnectionSpec } from '@rolepolicy/kube';
import type { ManagedScope } from '@rolepolicy/policy';
import { requestSnapshot } from '@rolepolicy/contracts';
import {
  API_VERSION,
  blockingClaims,
  detectConflict,
  type ConflictVerdict,
  type PolicyClaims,
  type PostgresPolicy,
  type ReconcileError,
} from '@rolepolicy/plan-lifecycle';
import { connectionDigest, type PeerClaim } from './connection-digest.js';
import { inspectFailure } from '../planning/planning.js';
import { peerClaims } from '../planning/prepare.js';
import type { SecretReader } from '@rolepolicy/contracts';
import { readPolicySecrets, secretReadError } from '@rolepolicy/plan-lifecycle';

/** A verdict, or why the pass cannot decide one (its own connection failed, or a proof could not be asked). */
export type ProvenVerdict =
  | { readonly kind: 'verdict'; readonly verdict: ConflictVerdict }
  | { readonly kind: 'failed'; readonly error: ReconcileError };

/** What a proof needs: the inspector (a session that reads the identity) and the gateway's Secret reads. */
export interface ConflictProofDeps {
  readonly nats: NatsConnection;
  readonly secrets: SecretReader;
  readonly inspectTimeoutMs: number;
  readonly inspectSealKey: string;
}

/** Whether a session opened; `answered` false when no inspector answered at all (nothing was learned). */
type Reach =
  | { readonly ok: true; readonly identity: string | null }
  | { readonly ok: false; readonly answered: boolean; readonly error: ReconcileError };

/** What a session with a policy's connection showed: the connection's digest and the server's identity. */
interface Reached {
  readonly connection: string;
  /** `system_identifier`, null when the session could not read it (ADR 0027 falls back to the address). */
  readonly identity: string | null;
}

/** An empty managed scope: the inspection then reads only the server, the session role and the identity. */
const IDENTITY_ONLY: ManagedScope = {
  roles: [],
  membership_grantors: [],
  schemas: [],
  owned_schemas: [],
  wildcards: [],
  public_objects: [],
  default_privilege_scopes: [],
  include_database_privileges: false,
  database_targets: [],
  function_signatures: [],
};

/**
 * Remembers, per policy uid, the connection that last reached its database, and decides conflicts from
 * proven claims only. A claim whose connection never logged in (a guessed address, bad credentials, an
 * unreachable host) claims nothing, so naming another tenant's database and roles blocks nobody.
 */
export class ConflictProof {
  /**
   * Policy uid -> digest of the connection a read of its database last succeeded with, and the server's
   * physical identity that read showed.
   */
  private readonly reached = new Map<string, Reached>();
  private sequence = 0;

  constructor(private readonly deps: ConflictProofDeps) {}

  /**
   * A read of the policy's database with `connection` succeeded (its own pass, or a proof), showing the
   * server's `system_identifier` (null: unreadable). `identity` undefined (a fingerprint-only answer, which
   * reads no identity) keeps what an earlier read of the same connection showed.
   */
  noteReached(uid: string, connection: ResolvedConnectionSpec, identity?: string | null): void {
    const digest = connectionDigest(connection);
    const known = this.reached.get(uid);
    const kept = known !== undefined && known.connection === digest ? known.identity : null;
    this.reached.set(uid, { connection: digest, identity: identity === undefined ? kept : identity });
  }

  /**
   * The conflict verdict of `self` against peers whose connection reached the database (`peers`: all peers'
   * claims, or only those that can overlap `self`, PeerClaims.overlapping: the verdict is the same;
   * `peerPolicy`: the live policy of a peer's claims, looked up only for a peer that needs a proof). A senior
   * peer that would block `self` and has no proof yet is asked for one now (a session with its own connection).
   * A conflict with another namespace is reported only once `self`'s own connection reached the database,
   * so a policy that cannot log in learns nothing of what other namespaces manage there.
   */
  async verdict(
    self: {
      readonly policy: PostgresPolicy;
      readonly claims: PolicyClaims;
      readonly connection: ResolvedConnectionSpec;
    },
    peers: readonly PeerClaim[],
    peerPolicy: (claims: PolicyClaims) => PostgresPolicy | undefined,
  ): Promise<ProvenVerdict> {
    const proven = (p: PeerClaim) => this.reached.get(p.claims.uid)?.connection === p.connection;
    const byUid = new Map(peers.map((p) => [p.claims.uid, p]));
    const own = connectionDigest(self.connection);
    const mine = this.withIdentity(self.claims, own);
    // An unproven peer has no identity here, so only its address can put it on this server: a peer that
    // reaches the server under another host name counts once its own pass (or a proof) read the identity.
    const unproven = blockingClaims(
      mine,
      peers.map((p) => this.withIdentity(p.claims, p.connection)),
    ).filter((c) => !proven(byUid.get(c.uid)!));
    const asked = await Promise.all(unproven.map((c) => this.provePeer(peerPolicy(c))));
    const failed = asked.find((a): a is ProvenVerdict & { kind: 'failed' } => a !== null);
    if (failed !== undefined) return failed;
    const verdict = detectConflict(
      mine,
      peers.filter(proven).map((p) => this.withIdentity(p.claims, p.connection)),
    );
    if (verdict.kind === 'conflict' && verdict.otherNamespaces != null) {
      if (this.reached.get(self.claims.uid)?.connection !== own) {
        const reach = await this.reach(self.policy, self.connection);
        if (!reach.ok) return { kind: 'failed', error: reach.error };
        this.reached.set(self.claims.uid, { connection: own, identity: reach.identity });
      }
    }
    return { kind: 'verdict', verdict };
  }

  /**
   * Forgets a gone policy's proof (PeerClaims reports deletions): uids are never reused, so this only keeps
   * the memory to the live policies, without a look at every policy on every pass.
   */
  forget(uid: string): void {
    this.reached.delete(uid);
  }

  /** `claims` with the server identity a read through `connection` (a digest) showed, when one did. */
  private withIdentity(claims: PolicyClaims, connection: string): PolicyClaims {
    const known = this.reached.get(claims.uid);
    return known !== undefined && known.connection === connection && known.identity !== null
      ? { ...claims, serverIdentity: known.identity }
      : claims;
  }

  /**
   * Asks for a peer's proof: its Secrets read now, its connection resolved, a session opened with it. The
   * database's answer (refused login, no such host, no such database) means no proof; only a failure to ask
   * (no gateway, no inspector) fails the pass, since deciding without the peer could fight it.
   */
  private async provePeer(
    peer: PostgresPolicy | undefined,
  ): Promise<(ProvenVerdict & { kind: 'failed' }) | null> {
    if (peer === undefined) return null;
    let resolved;
    try {
      const secrets = await readPolicySecrets(this.deps.secrets, peer);
      resolved = peerClaims(secrets.policy, secrets.lookup);
    } catch (error) {
      if (error instanceof SecretAccessError && !error.transient) return null;
      return { kind: 'failed', error: secretReadError(error) };
    }
    if (resolved === null) return null;
    const reach = await this.reach(peer, resolved.connection);
    if (reach.ok) {
      this.reached.set(peer.metadata.uid, {
        connection: connectionDigest(resolved.connection),
        identity: reach.identity,
      });
      return null;
    }
    return reach.answered ? null : { kind: 'failed', error: reach.error };
  }

  /** Opens a session with `connection` through the inspector and reads only the target's identity. */
  private async reach(policy: PostgresPolicy, connection: ResolvedConnectionSpec): Promise<Reach> {
    try {
      const result = await requestSnapshot(
        this.deps.nats,
        {
          v: 1,
          requestId: `${policy.metadata.uid}.${policy.metadata.generation}.reach.${++this.sequence}`,
          source: {
            apiVersion: API_VERSION,
            kind: 'PostgresPolicy',
            namespace: policy.metadata.namespace,
            name: policy.metadata.name,
            uid: policy.metadata.uid,
          },
          generation: policy.metadata.generation,
          connection: connection as never,
          scope: managedScopePayload(IDENTITY_ONLY),
        },
        { timeoutMs: this.deps.inspectTimeoutMs, sealTo: this.deps.inspectSealKey },
      );
      return result.ok
        ? { ok: true, identity: result.snapshot.identity?.physical ?? null }
        : { ok: false, answered: true, error: inspectFailure(result.error) };
    } catch (error) {
      const text = error instanceof Error ? error.message.split('\n')[0] : String(error);
      return {
        ok: false,
        answered: false,
        error: {
          class: 'transient',
          reason: 'DatabaseInspectionFailed',
          message: `no inspector answered: ${text}`,
        },
      };
    }
  }
}
