// The ResultFacts of every way a request ends without or around SQL, built from decisions and redacted
// errors only (never from a password, verifier or connection URL). Pure.
import { clipStatement, type ExecutionError } from '@rolepolicy/catalog';
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import type { ExecutionDecision } from './decide.js';
import { transientCode } from './failures.js';
import type { FreshState, FreshVerdict } from './fresh-verdict.js';
import { freshInputs, type PlanningInputs } from './replan.js';
import type { ResultFacts } from './result.js';

/** A v1 request: it cannot be re-planned, so it is never executed. */
export const INCOMPLETE: ResultFacts = {
  phase: 'Failed',
  reason: 'RequestIncomplete',
  message: 'execute request v1 carries no planning inputs; the executor needs v2 to re-plan',
};

/** The result of a fresh-state verdict that stops the request (never `proceed`). */
export function verdictFacts(verdict: Exclude<FreshVerdict, { kind: 'proceed' }>): ResultFacts {
  switch (verdict.kind) {
    case 'skip':
      return { phase: 'Skipped', reason: verdict.reason, message: verdict.message };
    case 'superseded':
      return { phase: 'Superseded', reason: verdict.reason, message: verdict.message };
    case 'fail_closed':
      return { phase: 'Failed', reason: verdict.reason, message: verdict.message };
    default: {
      const unreachable: never = verdict;
      return unreachable;
    }
  }
}

/** The policy's connection now resolves to another target than the one the digest bound. */
export function targetChanged(now: string | undefined): ResultFacts {
  return {
    phase: 'Superseded',
    reason: 'TargetReferenceChanged',
    message: `the policy's connection now resolves to target ${now ?? '(none)'}, not the approved one; no SQL was run`,
  };
}

/** The result of a decision that runs no SQL. */
export function refusal(
  decision: Exclude<ExecutionDecision, { kind: 'execute' }>,
  recomputed: string,
): ResultFacts {
  switch (decision.kind) {
    case 'converged':
      return {
        phase: 'Applied',
        reason: decision.reason,
        message: decision.message,
        recomputedDigest: recomputed,
      };
    case 'superseded':
      return {
        phase: 'Superseded',
        reason: decision.reason,
        message: decision.message,
        recomputedDigest: recomputed,
      };
    case 'fail_closed':
      return {
        phase: 'Failed',
        reason: decision.reason,
        message: decision.message,
        recomputedDigest: recomputed,
      };
    default: {
      const unreachable: never = decision;
      return unreachable;
    }
  }
}

/**
 * Under the lock: the policy may have changed while this replica waited. A different connection target
 * is refused; different planning inputs are skipped (the planner re-plans and asks again).
 */
export function changedWhileWaiting(
  request: ExecuteRequestV2,
  fresh: FreshState,
  inputs: PlanningInputs,
): ResultFacts | undefined {
  if (fresh.policy === undefined) return undefined; // freshVerdict reports it
  if (fresh.target !== request.target) return targetChanged(fresh.target);
  if (JSON.stringify(freshInputs(request, fresh.policy.spec)) !== JSON.stringify(inputs)) {
    return {
      phase: 'Skipped',
      reason: 'PolicyChanged',
      message: 'the policy changed while the executor waited for the database lock; no SQL was run',
    };
  }
  return undefined;
}

/** A rotated password Secret needs a new plan (the digest bound the old version), not a failure. */
export function passwordSourceChanged(message: string, recomputed: string): ResultFacts {
  return { phase: 'Superseded', reason: 'PasswordSourceChanged', message, recomputedDigest: recomputed };
}

/** `Applying` (about to run `count` statements) or `Applied` / `Executed` (ran them) for `digest`. */
export function executedFacts(phase: 'Applying' | 'Applied', digest: string, count: number): ResultFacts {
  return {
    phase,
    reason: phase === 'Applying' ? 'Executing' : 'Executed',
    message:
      phase === 'Applying'
        ? `running ${count} statements in one transaction`
        : `applied ${count} statements in one transaction`,
    recomputedDigest: digest,
    executedDigest: digest,
    statementCount: count,
  };
}

/** A statement failed and the transaction rolled back; `probeStatements` ran before the plan's own. */
export function executionFailed(
  request: ExecuteRequestV2,
  error: ExecutionError,
  probeStatements: number,
): ResultFacts {
  const index = error.statementIndex - probeStatements;
  return {
    phase: 'Failed',
    reason: 'ExecutionFailed',
    message: error.message,
    errorClass: transientCode(error.sqlState) ? 'transient' : 'permanent',
    recomputedDigest: request.changeDigest,
    lastError: {
      // The contract bounds both at 4096 characters; a grouped statement can be much longer.
      message: clipStatement(error.message, 4000),
      statementIndex: index >= 0 ? index : null,
      statement: clipStatement(error.statement, 4000),
      sqlState: error.sqlState !== null && error.sqlState.length === 5 ? error.sqlState : null,
    },
  };
}
