// Decide, for an executor result: what the scheduler records of it (the plan's status, the request's error,
// the revocation lag) and how it logs it. Pure; result-handling.ts carries out what this returns, then
// runs the request's pass, which reads the result from the plan.
import type { Cached, ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { revocationDueAt } from '../lifecycle/clock.js';
import { errorText, planStatusOfResult } from '../lifecycle/scoped-plan.js';
import { timestamp } from '../lifecycle/time.js';

/** A log line and its level. */
export interface ResultLog {
  readonly level: 'log' | 'warn';
  readonly line: string;
}

/** What to record of an activate or revoke result. */
export interface ScopedResultRecord {
  readonly kind: 'scoped';
  /** The plan's status patch (merge patch), or null when the plan keeps its status (Blocked, AlreadyApplied). */
  readonly planStatus: Record<string, unknown> | null;
  /** The request's `lastError` (a Blocked result of the request as it is), else undefined. */
  readonly requestError: string | undefined;
  /** Seconds from the request's expiry to a revoke applied after it (the revocation lag), else undefined. */
  readonly revocationLagSeconds: number | undefined;
  readonly log: ResultLog;
}

/** What to record of a Sweep result: a log line only. */
export interface SweepResultRecord {
  readonly kind: 'sweep';
  readonly log: ResultLog;
}

/**
 * What a result changes, read at `now`. `request` is the request the result names as the cache has it
 * (undefined when it is gone, or another object holds its name now: then only the plan is recorded).
 */
export function afterResult(
  result: ScopedExecuteResultV1,
  request: Cached<'ephemeralaccessrequest'> | undefined,
  now: number,
): ScopedResultRecord | SweepResultRecord {
  const operation = result.operation;
  if (operation === 'Sweep') {
    // A revoked edge is a warning (something skipped a revoke); the rest is routine.
    const line = `sweep of ${result.policy.namespace}/${result.policy.name}: ${result.outcome} (${result.reason}): ${result.message}`;
    const routine = result.outcome === 'Applied' && result.statements.length === 0;
    return { kind: 'sweep', log: { level: routine ? 'log' : 'warn', line } };
  }
  const same = request !== undefined && request.metadata.uid === result.request.uid ? request : undefined;
  return {
    kind: 'scoped',
    planStatus: planStatusOfResult({ ...result, operation }, timestamp(now)),
    requestError:
      same !== undefined && result.outcome === 'Blocked'
        ? errorText(`${operation} blocked (${result.reason}): ${result.message}`)
        : undefined,
    revocationLagSeconds:
      same !== undefined && result.outcome === 'Applied' && operation === 'Revoke'
        ? revocationLag(same, now)
        : undefined,
    log: {
      level: 'log',
      line: `scoped ${operation} ${result.request.namespace}/${result.plan.name}: ${result.outcome} (${result.reason})`,
    },
  };
}

/**
 * The lag of a revoke applied at `now`: from the request's expiry, when it is past and the request was not
 * denied (a denied request's revoke is not an expiry's). What was kept is recorded on the revoke plan
 * (planStatusOfResult); the pass that ends the request copies it into retainedMemberships, so a scheduler
 * dying in between loses nothing.
 */
function revocationLag(request: Cached<'ephemeralaccessrequest'>, now: number): number | undefined {
  const expiresAt = revocationDueAt(request);
  const denied = request.status?.conditions?.some((c) => c.type === 'Denied' && c.status === 'True');
  return expiresAt !== undefined && now >= expiresAt && !denied ? (now - expiresAt) / 1000 : undefined;
}
