// Builds `rp.execute.result` payloads from what happened; every text field passes through here, and
// none of them is ever built from a password, verifier or connection URL.
import type { ExecuteRequestV1, ExecuteRequestV2, ExecuteResultV1 } from '@rolepolicy/contracts';

/** The parts of an outcome the executor knows; the rest is copied from the request. */
export type ResultFacts = Pick<ExecuteResultV1, 'phase' | 'reason' | 'message'> &
  Partial<
    Pick<
      ExecuteResultV1,
      | 'recomputedDigest'
      | 'executedDigest'
      | 'statementCount'
      | 'lastError'
      | 'errorClass'
      | 'appliedPasswordSourceVersions'
    >
  > & {
    /** When the transaction committed: the plan's `appliedAt` (else the report time). */
    readonly committedAt?: Date;
  };

/**
 * The source versions in effect after an Applied outcome: the request's, with the real version of each
 * generated password the execution created; a `:missing` version is never reported as applied.
 */
function appliedVersions(request: ExecuteRequestV2, facts: ResultFacts): Record<string, string> {
  const merged = { ...request.passwordSources, ...facts.appliedPasswordSourceVersions };
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => !v.endsWith(':missing')));
}

/**
 * The result payload for `request`; `now` is the report time (appliedAt/failedAt follow the phase).
 * @example resultFor(request, { phase: 'Applied', reason: 'Executed', message: '...' }, new Date())
 */
export function resultFor(
  request: ExecuteRequestV1 | ExecuteRequestV2,
  facts: ResultFacts,
  now: Date,
): ExecuteResultV1 {
  const at = now.toISOString();
  return {
    v: 1,
    plan: request.plan,
    ...(request.v === 2 ? { policy: request.policy } : {}),
    idempotencyKey: request.idempotencyKey,
    phase: facts.phase,
    reason: facts.reason,
    message: facts.message.slice(0, 4096),
    approvedDigest: request.changeDigest,
    recomputedDigest: facts.recomputedDigest ?? null,
    executedDigest: facts.executedDigest ?? null,
    statementCount: facts.statementCount ?? 0,
    // Applied (executed or already converged) means every source version of the request is in effect.
    ...(facts.phase === 'Applied'
      ? {
          appliedAt: (facts.committedAt ?? now).toISOString(),
          ...(request.v === 2 ? { appliedPasswordSourceVersions: appliedVersions(request, facts) } : {}),
        }
      : {}),
    ...(facts.phase === 'Failed' ? { failedAt: at, errorClass: facts.errorClass ?? 'permanent' } : {}),
    ...(facts.lastError ? { lastError: facts.lastError } : {}),
    reportedAt: at,
  };
}
