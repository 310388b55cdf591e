// Policy state, the planner's memory of each followed policy between passes: what the last pass read,
// which results it awaits, and whether a pass waits for one. The reconciler owns the map; the rules that
// read this state without I/O live here.
import type { ResourceCache } from '@rolepolicy/contracts';

/** How long a pass defers to a pending execution result before planning anyway (once the plan runs). */
export const RESULT_WAIT_MS = 30_000;
/**
 * How long a pass defers to a plan an executor has not reported on while the cache shows it queued or running
 * (Approved or Applying). A fleet's backlog can hold a request, or its result, longer than
 * {@link RESULT_WAIT_MS}; planning again then supersedes a plan that is about to run or has just committed
 * ("nothing left to apply"). A killed executor's request is redelivered and reported by another one.
 */
export const LIVE_PLAN_WAIT_MS = 600_000;
/** What the planner keeps per followed policy between passes. */
export interface PolicyState {
  signature: string;
  uid: string | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The last True/False Ready we wrote (an Unknown while applying keeps it), for the Recovered Event. */
  settled: 'True' | 'False' | undefined;
  /** Plans sent for execution whose result has not been handled yet, with the send time. */
  awaiting: Map<string, number>;
  /** A pass was put off while a result was awaited: the result handler runs it instead of a later timer. */
  deferred: boolean;
  /**
   * The plan an Applied result just reported, with the digest of the inputs its execution was requested
   * with: the next pass may verify from its post-apply snapshot while those inputs still hold.
   */
  verifyPlan: { readonly name: string; readonly inputs: string | undefined } | undefined;
  /** Plan name -> digest of the inputs its execution was requested with ({@link executionInputs}). */
  requestedInputs: Map<string, string | null>;
  /**
   * Plan name -> how many of its execution requests came back Skipped or Superseded while the plan may
   * still be actionable. Such a request is spent (its idempotency key, and the result's, are deduplicated
   * by JetStream), so asking again needs a new key.
   */
  skipped: Map<string, number>;
}

/** The state of a policy the planner starts following. */
export function newPolicyState(signature: string, uid: string | undefined): PolicyState {
  return {
    signature,
    uid,
    timer: undefined,
    awaiting: new Map(),
    deferred: false,
    verifyPlan: undefined,
    requestedInputs: new Map(),
    skipped: new Map(),
    settled: undefined,
  };
}

/**
 * True while a plan we sent for execution has no handled result yet: while the cache shows it queued or
 * running (Approved, Applying) or not at all, at most {@link LIVE_PLAN_WAIT_MS}, else {@link RESULT_WAIT_MS},
 * counted from when it was sent or started `Applying`, whichever is later.
 * Planning then would read the database after (or while) the executor applied the plan but the plan and
 * policy status from before: it would supersede the applied plan as "nothing left to apply", or plan the
 * applied password again. The executor re-checks the fresh plan and policy under its lock, so an edit or
 * a denial meanwhile is not lost; the result handler wakes the policy.
 */
export function resultPending(
  state: PolicyState,
  namespace: string,
  cache: Pick<ResourceCache, 'get'>,
  now: number,
): boolean {
  for (const [planName, sentAt] of state.awaiting) {
    const status = cache.get('postgrespolicyplan', namespace, planName)?.status;
    const applyingSince = Date.parse(status?.applyingSince ?? '');
    const since = Number.isFinite(applyingSince) ? Math.max(sentAt, applyingSince) : sentAt;
    // Not in the cache yet (a busy planner's cache can trail its own writes by tens of seconds), queued or
    // running: the executor has not reported; only a phase the cache already shows as settled lifts it sooner.
    const phase = status?.phase;
    const live = phase === undefined || phase === 'Approved' || phase === 'Applying';
    const limit = live ? LIVE_PLAN_WAIT_MS : RESULT_WAIT_MS;
    if (now - since > limit) state.awaiting.delete(planName);
  }
  return state.awaiting.size > 0;
}
