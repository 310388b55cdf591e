// When a policy's next pass runs after an execution result was recorded: the one choice among five
// that the result handler used to make inline. Pure; the reconciler carries out what it returns.

/** Delay of the pass after an executor refused a plan as superseded (its reading differs from ours). */
export const SUPERSEDED_RECHECK_SECONDS = 2;

/** What the result handler knows when it chooses. */
export interface AfterResultInput {
  /** The result's phase. */
  readonly phase: string;
  /** The after-execution decision's own requeue delay. */
  readonly requeueAfterSeconds: number;
  /** A pass was put off while a result was awaited, and no other result is awaited now (asked lazily). */
  readonly deferredPassFree: () => boolean;
  /** The policy has candidates: a full pass stamps a promotion and plans them (asked lazily). */
  readonly hasCandidates: () => boolean;
}

/** Run the pass now, or after `seconds`; `resumeDeferred` also clears the deferred mark. */
export type Wake =
  | { readonly kind: 'now' }
  | { readonly kind: 'after'; readonly seconds: number; readonly resumeDeferred: boolean };

/** The next pass after a recorded result. */
export function wakeAfterResult(input: AfterResultInput): Wake {
  // The executor refused without writing the plan: the next pass supersedes it from its own reading
  // or asks again under a new key, a little later (never in a tight loop).
  if (input.phase === 'Superseded') {
    return { kind: 'after', seconds: SUPERSEDED_RECHECK_SECONDS, resumeDeferred: false };
  }
  if (input.requeueAfterSeconds === 0) return { kind: 'now' };
  // A pass put off while this result was awaited (a Secret deleted, a force-reconcile request, an edit
  // the executor refused) runs shortly, not at the interval; it reads this result's plan phase and policy
  // status through the planner's own writes (own-plan-writes.ts) even before the cache shows them.
  if (input.deferredPassFree()) {
    return { kind: 'after', seconds: SUPERSEDED_RECHECK_SECONDS, resumeDeferred: true };
  }
  if (input.hasCandidates()) return { kind: 'now' };
  return { kind: 'after', seconds: input.requeueAfterSeconds, resumeDeferred: false };
}
