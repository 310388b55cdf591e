// Drives decideReconcile against a FakeCluster: one call = one policy event handled end to end (minus I/O).

import type { ConflictVerdict } from '../conflict.js';
import { decideReconcile, type LifecycleSettings, type ReconcileDecision } from '../decide.js';
import type { PlanningOutcome } from '../outcome.js';
import type { ComputedPlan } from '../outcome.js';
import { executionVerdict } from '../execution-verdict.js';
import { decideAfterExecution } from '../execution-report.js';
import { applyingPatch } from '../plan-patches.js';
import type { ExecutionRequest } from '../steps.js';
import type { FakeCluster } from './fixtures.js';

/** Options of {@link reconcileOnce}. */
export interface ReconcileOptions {
  readonly conflict?: ConflictVerdict;
  readonly jitter?: number;
  readonly settings?: LifecycleSettings;
  /** The plan whose Applied result this pass verifies (the pass right after it). */
  readonly verifying?: string;
}

/** Decides with the cluster's current policy and plans, then applies the steps to the cluster. */
export function reconcileOnce(
  cluster: FakeCluster,
  outcome: ComputedPlan | PlanningOutcome,
  now: string,
  options: ReconcileOptions = {},
): ReconcileDecision {
  const planning: PlanningOutcome = 'kind' in outcome ? outcome : { kind: 'computed', plan: outcome };
  const decision = decideReconcile({
    policy: cluster.policy,
    plans: cluster.planList(),
    conflict: options.conflict ?? { kind: 'clear' },
    outcome: planning,
    now,
    jitter: options.jitter ?? 0,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.verifying ? { verifying: options.verifying } : {}),
  });
  cluster.apply(decision.steps, now);
  return decision;
}

/** The names of created plans in a decision. */
export function createdPlans(decision: ReconcileDecision): string[] {
  return decision.steps.flatMap((s) => (s.kind === 'createPlan' ? [s.plan.metadata.name] : []));
}

/** The plan names whose execution a decision requests. */
export function executed(decision: ReconcileDecision): string[] {
  return decision.steps.flatMap((s) => (s.kind === 'requestExecution' ? [s.request.planName] : []));
}

/** Condition lookup on the decision's status. */
export function condition(decision: ReconcileDecision, type: string) {
  return decision.status.conditions?.find((c) => c.type === type);
}

/** What the test's "database" recomputes at execution time. */
export interface ExecutorView {
  readonly changeDigest: string;
  readonly changeDigestEncoding: string;
  readonly observed?: { readonly physical: string | null; readonly logical: string | null };
}

/**
 * Plays the executor for one request: verdict under the lock, then Applying -> Applied (or the refusal),
 * and the planner's handling of the report. Returns whether SQL ran.
 */
export function runExecutor(
  cluster: FakeCluster,
  request: ExecutionRequest,
  view: ExecutorView,
  now: string,
): boolean {
  const plan = cluster.plan(request.planName);
  const verdict = executionVerdict({
    plan,
    policySpec: cluster.policy.spec,
    ownerTransferBlocked: false,
    recomputed: { changeDigest: view.changeDigest, changeDigestEncoding: view.changeDigestEncoding },
    observed: view.observed ?? {
      physical: plan.status?.targetPhysicalIdentity ?? null,
      logical: plan.status?.targetLogicalFingerprint ?? null,
    },
  });
  if (verdict.kind !== 'execute') {
    const after = decideAfterExecution({
      policy: cluster.policy,
      plan,
      report: { kind: 'refused', verdict },
      now,
      jitter: 0,
    });
    if (after.planPatch) cluster.patchPlan(after.planPatch.name, after.planPatch.status);
    if (after.status) cluster.apply([{ kind: 'writePolicyStatus', status: after.status }], now);
    return false;
  }
  const applying = applyingPatch(plan, now);
  cluster.patchPlan(applying.name, applying.status);
  const after = decideAfterExecution({
    policy: cluster.policy,
    plan: cluster.plan(request.planName),
    report: { kind: 'applied', appliedPasswordSourceVersions: {} },
    now,
    jitter: 0,
  });
  if (after.planPatch) cluster.patchPlan(after.planPatch.name, after.planPatch.status);
  if (after.status) cluster.apply([{ kind: 'writePolicyStatus', status: after.status }], now);
  return true;
}
