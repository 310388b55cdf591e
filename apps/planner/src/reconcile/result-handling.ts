// The result half of the planner's loop: an executor's result recorded on its policy (status, Event,
// own writes of the plan's terminal phase) and the choice of when the policy's next pass runs
// (after-result.ts). The reconciler supplies the context; nothing here reads the clock or the cache
// except through it.
import type { ExecuteResultV1, ResourceCache } from '@rolepolicy/contracts';
import { logRecord, type LogRecord } from '@rolepolicy/runtime';
import {
  decideAfterExecution,
  type PolicyWriteCause,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicyPlanStatus,
  type PostgresPolicyStatus,
} from '@rolepolicy/plan-lifecycle';
import { wakeAfterResult } from './after-result.js';
import { policyKey } from './change-keys.js';
import { inResultSpan } from './pass-trace.js';
import { reportOf } from './execution-results.js';
import { planExecutionEvent, type PlanEvent } from '../planning/plan-events.js';
import { resultPending, type PolicyState } from './policy-state.js';
import { controllerUid } from './triggers.js';

/** What result handling reads and does, supplied by the reconciler. */
export interface ResultContext {
  readonly cache: Pick<ResourceCache, 'get' | 'withUid'>;
  readonly log: { log(m: string | LogRecord): void };
  readonly now: () => number;
  /** Runs `task` in the policy's queue slot (never beside a pass of the same policy). */
  runInSlot(key: string, task: () => Promise<void>): Promise<void>;
  state(key: string): PolicyState | undefined;
  trigger(key: string): void;
  /** The policy's pass waiting for a slot (if any) goes first: it now confirms an apply. */
  hurry(key: string): void;
  requeue(key: string, seconds: number): void;
  currentPolicy(namespace: string, name: string): PostgresPolicy | null;
  currentPlan(namespace: string, name: string): PostgresPolicyPlan | null;
  /** A terminal result's plan status, read over the cache until it shows it (own-plan-writes.ts). */
  resultHandled(namespace: string, name: string, status: PostgresPolicyPlanStatus): void;
  writeStatus(policy: PostgresPolicy, status: PostgresPolicyStatus, cause: PolicyWriteCause): Promise<void>;
  recordEvent(event: PlanEvent, policy: PostgresPolicy): Promise<void>;
  hasCandidates(policy: PostgresPolicy): boolean;
}

/** Records an executor result on the policy, in the policy's queue slot, and says when its next pass runs. */
export async function handleResult(ctx: ResultContext, result: ExecuteResultV1): Promise<void> {
  const namespace = result.plan.namespace;
  const planObject = ctx.cache.get('postgrespolicyplan', namespace, result.plan.name);
  // By uid through the cache's index: a walk of the namespace's policies per result grew with the fleet.
  const owner = planObject === undefined ? undefined : controllerUid(planObject);
  const ownerName =
    result.policy?.name ??
    (owner === undefined ? undefined : ctx.cache.withUid('postgrespolicy', namespace, owner)?.metadata.name);
  if (ownerName === undefined) return;
  const key = policyKey(namespace, ownerName);
  await ctx.runInSlot(key, async () => {
    const report = reportOf(result);
    if (report === 'ignore') return;
    const state = ctx.state(key);
    state?.awaiting.delete(result.plan.name);
    // A request asked again (after Skipped or Superseded) records its inputs anew.
    const requestedInputs = state?.requestedInputs.get(result.plan.name) ?? undefined;
    state?.requestedInputs.delete(result.plan.name);
    if (report === 'reconcile') {
      state?.skipped.set(result.plan.name, (state.skipped.get(result.plan.name) ?? 0) + 1);
      ctx.trigger(key);
      return;
    }
    if (result.phase === 'Superseded') {
      // The executor refuses without writing the plan: the next pass either supersedes it from its own
      // reading or asks again, under a new key, a little later (never in a tight loop).
      state?.skipped.set(result.plan.name, (state.skipped.get(result.plan.name) ?? 0) + 1);
    } else {
      state?.skipped.delete(result.plan.name); // the plan is terminal now: never requested again
      const terminal = terminalPlanStatus(result);
      if (terminal !== null) ctx.resultHandled(namespace, result.plan.name, terminal);
      if (state !== undefined) {
        state.verifyPlan =
          result.phase === 'Applied' ? { name: result.plan.name, inputs: requestedInputs } : undefined;
        if (state.verifyPlan !== undefined) ctx.hurry(key);
      }
    }
    const policy = ctx.currentPolicy(namespace, ownerName);
    if (policy === null) return;
    if (result.policy?.uid !== undefined && result.policy.uid !== policy.metadata.uid) return;
    const plan = ctx.currentPlan(namespace, result.plan.name);
    if (plan === null) {
      ctx.trigger(key);
      return;
    }
    const at = new Date(ctx.now());
    const decision = decideAfterExecution({
      policy,
      plan,
      report,
      now: at.toISOString(),
      jitter: Math.random(),
    });
    // An Applied result is announced by the plan's PlanApplied below; the policy's write does not repeat it.
    const cause = result.phase === 'Applied' ? 'planApplied' : 'pass';
    await inResultSpan(policy, result, at, async () => {
      if (decision.status !== null) await ctx.writeStatus(policy, decision.status, cause);
      const executionEvent = planExecutionEvent(result);
      if (executionEvent !== undefined) await ctx.recordEvent(executionEvent, policy);
    });
    ctx.log.log(
      logRecord(`plan ${namespace}/${result.plan.name}: ${result.phase} (${result.reason})`, {
        kind: 'PostgresPolicyPlan',
        namespace,
        name: result.plan.name,
        plan: result.plan.name,
        digest: result.executedDigest ?? result.approvedDigest,
        phase: result.phase,
        reason: result.reason,
      }),
    );
    const wake = wakeAfterResult({
      phase: result.phase,
      requeueAfterSeconds: decision.requeueAfterSeconds,
      deferredPassFree: () =>
        state?.deferred === true && !resultPending(state, namespace, ctx.cache, ctx.now()),
      hasCandidates: () => ctx.hasCandidates(policy),
    });
    if (wake.kind === 'now') ctx.trigger(key);
    else {
      if (wake.resumeDeferred && state !== undefined) state.deferred = false;
      ctx.requeue(key, wake.seconds);
    }
  });
}

/** The plan status a terminal result stands for (the executor writes it), or null for other phases. */
function terminalPlanStatus(result: ExecuteResultV1): PostgresPolicyPlanStatus | null {
  if (result.phase === 'Applied') {
    return { phase: 'Applied', ...(result.appliedAt === undefined ? {} : { appliedAt: result.appliedAt }) };
  }
  if (result.phase === 'Failed') {
    return { phase: 'Failed', ...(result.failedAt === undefined ? {} : { failedAt: result.failedAt }) };
  }
  return null;
}
