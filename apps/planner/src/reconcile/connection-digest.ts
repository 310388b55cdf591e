// What is remembered of a policy's connection between passes: a keyed digest (credentials included), so the
// planner can tell whether a connection it saw reach the database is still the one a claim uses (ADR 0024).
import { createHmac, randomBytes } from 'node:crypto';
import type { ResolvedConnectionSpec } from '@rolepolicy/kube';
import { canonicalJson } from '@rolepolicy/policy';
import type { PolicyClaims } from '@rolepolicy/plan-lifecycle';

// The digest covers credentials, so it is keyed by a secret of this process: a memory dump or a log that
// ever showed it lets nobody test password guesses against it.
const DIGEST_KEY = randomBytes(32);

/** Keyed digest of a resolved connection (credentials included): in memory only, never sent or logged. */
export function connectionDigest(connection: ResolvedConnectionSpec): string {
  return createHmac('sha256', DIGEST_KEY).update(canonicalJson(connection)).digest('hex');
}

/** A peer's claims and the digest of the connection they were resolved with. */
export interface PeerClaim {
  readonly claims: PolicyClaims;
  readonly connection: string;
}
