// The executor's check of the plan and policy as freshly read from the cluster (the ResourceCache), made
// under the database lock: a denial, suspend, supersede or recreate between request and execution stops SQL.
// Pure. The lifecycle's `executionVerdict` is imported from the planner (tolerated until it moves to a lib).
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import type { TargetIdentityReading } from '@rolepolicy/policy';
import {
  candidateOriginRefusal,
  planDecision,
  executionVerdict,
  type PostgresPolicy,
  type PostgresPolicyPlan,
} from '@rolepolicy/plan-lifecycle';

/** Why nothing ran although the request was well-formed (result phase `Skipped`). */
export type SkipReason =
  | 'PolicyGone'
  | 'PolicyRecreated'
  | 'PlanGone'
  | 'NotApproved'
  | 'InProgress'
  | 'AlreadyTerminal'
  | 'Suspended'
  | 'ObserveMode'
  | 'OwnerTransferBlocked'
  | 'CandidateNotPromoted';

/** Outcome of {@link freshVerdict}; only `proceed` lets the request's own checks run. */
export type FreshVerdict =
  | { readonly kind: 'proceed' }
  | { readonly kind: 'skip'; readonly reason: SkipReason; readonly message: string }
  | { readonly kind: 'superseded'; readonly reason: string; readonly message: string }
  | { readonly kind: 'fail_closed'; readonly reason: string; readonly message: string };

/** The plan and its policy as the cache holds them now (undefined when absent). */
export interface FreshState {
  readonly policy: PostgresPolicy | undefined;
  readonly plan: PostgresPolicyPlan | undefined;
  /** The digest target reference of the policy's current `spec.connection` (no Secret read). */
  readonly target?: string;
}

/** Checks that need no database: the policy and plan still exist and are the ones the request names. */
export function presenceVerdict(request: ExecuteRequestV2, fresh: FreshState): FreshVerdict {
  const { policy, plan } = fresh;
  const policyName = `${request.policy.namespace}/${request.policy.name}`;
  if (policy === undefined) {
    return { kind: 'skip', reason: 'PolicyGone', message: `policy ${policyName} no longer exists` };
  }
  if (request.policy.uid !== undefined && policy.metadata.uid !== request.policy.uid) {
    return {
      kind: 'skip',
      reason: 'PolicyRecreated',
      message: `policy ${policyName} was deleted and recreated since the request`,
    };
  }
  if (plan === undefined) {
    return {
      kind: 'skip',
      reason: 'PlanGone',
      message: `plan ${request.plan.namespace}/${request.plan.name} no longer exists`,
    };
  }
  const notPromoted = candidateOriginRefusal(plan, policy);
  if (notPromoted !== null) return { kind: 'skip', reason: 'CandidateNotPromoted', message: notPromoted };
  return { kind: 'proceed' };
}

/**
 * True once the plan the request names is visible with a recorded decision (or the policy is gone, which
 * no wait fixes). The planner writes the plan's digest before its decision, so a decided plan carries the
 * digest too. Until then the planner's writes may still be on their way through the gateway, so the
 * executor waits and retries instead of reporting `PlanGone` / `NotApproved`.
 */
export function planVisible(fresh: FreshState): boolean {
  if (fresh.policy === undefined) return true;
  return fresh.plan !== undefined && planDecision(fresh.plan) !== 'undecided';
}

/** What the executor recomputed under the lock. */
export interface Recheck {
  readonly changeDigest: string;
  readonly changeDigestEncoding: string;
  readonly changeCount: number;
  readonly observed: TargetIdentityReading;
}

/**
 * The lifecycle's `executionVerdict` on the fresh plan and policy. Two adjustments, both because the
 * executor holds the database lock: a plan found `Applying` is a previous attempt's leftover (no one else
 * can be running it), so it is judged as `Approved`; and an empty re-plan is convergence, not a digest
 * mismatch, so the digest comparison is left to `decideExecution` in that case. Owner transfers are
 * `decideExecution`'s too (reported `Failed` / `OwnerTransferBlocked`).
 */
export function freshVerdict(request: ExecuteRequestV2, fresh: FreshState, now: Recheck): FreshVerdict {
  const present = presenceVerdict(request, fresh);
  if (present.kind !== 'proceed') return present;
  const policy = fresh.policy!;
  const stored = fresh.plan!;
  const plan: PostgresPolicyPlan =
    stored.status?.phase === 'Applying'
      ? { ...stored, status: { ...stored.status, phase: 'Approved' } }
      : stored;
  const converged = now.changeCount === 0;
  const verdict = executionVerdict({
    plan,
    policySpec: policy.spec,
    ownerTransferBlocked: false,
    recomputed: converged
      ? {
          changeDigest: plan.status?.changeDigest ?? '',
          changeDigestEncoding: plan.status?.changeDigestEncoding ?? '',
        }
      : { changeDigest: now.changeDigest, changeDigestEncoding: now.changeDigestEncoding },
    observed: now.observed,
  });
  switch (verdict.kind) {
    case 'execute':
      return { kind: 'proceed' };
    case 'skip':
      return verdict;
    case 'superseded':
    case 'fail_closed':
      return verdict;
    default: {
      const unreachable: never = verdict;
      return unreachable;
    }
  }
}
