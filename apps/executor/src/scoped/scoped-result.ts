// Builds `rp.execute.scoped.result` payloads; every text field passes through here (bounded), and none is
// ever built from a password, verifier or connection URL. Pure.
import type { ScopedExecuteRequestV1, ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import type { BundleMembership } from '@rolepolicy/policy';

/** What the executor knows of an outcome; the rest is copied from the request. */
export interface ScopedFacts {
  readonly outcome: ScopedExecuteResultV1['outcome'];
  readonly reason: string;
  readonly message: string;
  /** Redacted statements that ran (membership SQL carries no secret). */
  readonly statements?: readonly string[];
  readonly retained?: readonly BundleMembership[];
}

const MAX_STATEMENTS = 64;
const MAX_TEXT = 4096;

/** The result for `request`, reported at `now`. */
export function scopedResultFor(
  request: ScopedExecuteRequestV1,
  facts: ScopedFacts,
  now: Date,
): ScopedExecuteResultV1 {
  return {
    v: 1,
    plan: request.plan,
    request: request.request,
    policy: request.policy,
    operation: request.operation,
    bundleHash: request.bundleHash,
    idempotencyKey: request.idempotencyKey,
    outcome: facts.outcome,
    statements: (facts.statements ?? []).slice(0, MAX_STATEMENTS).map((s) => s.slice(0, MAX_TEXT)),
    retained: (facts.retained ?? [])
      .slice(0, 32)
      .map(({ role, member, inherit }) => ({ role, member, inherit })),
    reason: facts.reason,
    message: facts.message.slice(0, MAX_TEXT),
    reportedAt: now.toISOString(),
  };
}

/**
 * The JetStream message id of a result: a terminal outcome is published once per request key; a Blocked
 * one is told again on each attempt (the scheduler retries), so its id carries the report time.
 */
export function scopedResultMessageId(result: ScopedExecuteResultV1): string {
  const base = `${result.idempotencyKey}/${result.outcome}/${result.reason}`;
  return result.outcome === 'Blocked' ? `${base}/${result.reportedAt}` : base;
}
