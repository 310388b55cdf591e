// When a policy shows `Reconciling` before its outcome: a pass that waits for its turn (a burst behind
// PLANNER_CONCURRENCY) over the delay announces it, once per generation, and the pass that follows neither
// announces again nor sends its execution's Applying (one interim status per pass, issue 28).
import type { CachedObject } from '@rolepolicy/contracts';
import type { AnnounceTimers } from '@rolepolicy/runtime';
import type { PostgresPolicy, PostgresPolicyStatus } from '@rolepolicy/plan-lifecycle';
import { policy as policyFixture } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { EXECUTING_STATUS_AFTER_MS, RECONCILING_AFTER_MS } from './pass-timing.js';
import { newPolicyState } from './policy-state.js';
import { PolicyView } from './policy-view.js';
import { ReconcilingAnnouncer } from './reconciling-announcer.js';

const KEY = 'team-a/orders';
const condition = (type: string, status: 'True' | 'Unknown', reason: string) => ({
  type,
  status,
  reason,
  message: reason,
  last_transition_time: '2026-11-28T05:00:00Z',
});
const converged: PostgresPolicyStatus = {
  last_attempted_generation: 1,
  observed_generation: 1,
  conditions: [condition('Ready', 'True', 'Reconciled')],
};
const executing: PostgresPolicyStatus = {
  last_attempted_generation: 1,
  conditions: [condition('Ready', 'Unknown', 'Applying'), condition('Reconciling', 'True', 'Applying')],
};
const applied: PostgresPolicyStatus = { ...converged, current_plan_ref: { name: 'orders-1' } };

/** One followed policy (`spec`, `status` in the cache), a real PolicyView, and timers the test fires. */
function announcerOf(spec: Partial<PostgresPolicy['spec']> = {}, status?: PostgresPolicyStatus) {
  const policy = policyFixture(spec, {}, status);
  const sent: string[] = [];
  const pending: { fire: () => void; ms: number }[] = [];
  const timers: AnnounceTimers = {
    set: (fire, ms) => pending.push({ fire, ms }),
    clear: (handle) => {
      if (typeof handle === 'number') pending[handle - 1] = { fire: () => undefined, ms: 0 };
    },
  };
  const state = newPolicyState('', policy.metadata.uid);
  const view = new PolicyView({
    cache: { get: () => policy as unknown as CachedObject, list: () => [], withFields: () => [] } as never,
    sink: {
      send: async (command) => {
        const { status } = command as { status?: Record<string, unknown> };
        const conditions = (status?.['conditions'] ?? []) as {
          type: string;
          status: string;
          reason: string;
        }[];
        const c =
          conditions.find((x) => x.type === 'Ready') ?? conditions.find((x) => x.type === 'Reconciling');
        sent.push(`${c?.type}=${c?.status}/${c?.reason}`);
      },
      recordEvent: async () => undefined,
    },
    state: () => state,
    now: () => 0,
    timers,
  });
  const runs: Promise<void>[] = [];
  let following = true;
  const announcer = new ReconcilingAnnouncer({
    view,
    followed: (key) => following && key === KEY,
    // The policy's line is idle here: the task runs at once (KeyedQueue.run after the running work).
    run: (_key, task) => {
      const run = task();
      runs.push(run);
      return run;
    },
    now: () => 0,
    timers,
  });
  /** Fires the timers set for at most `ms` and waits for what they started. */
  const elapse = async (ms: number) => {
    const due = pending.filter((t) => t.ms <= ms);
    for (const t of due) pending[pending.indexOf(t)] = { fire: () => undefined, ms: 0 };
    for (const t of due) t.fire();
    await Promise.all(runs);
  };
  const forget = () => (following = false);
  return { policy, view, announcer, sent, elapse, forget, timersSet: () => pending.length };
}

it('a new policy whose pass waits over the delay shows Reconciling; its pass adds no interim status (2 writes)', async () => {
  const { policy, view, announcer, sent, elapse } = announcerOf();
  announcer.requested(KEY);
  announcer.requested(KEY); // merged into the same waiting pass: one timer
  await elapse(RECONCILING_AFTER_MS);
  expect(sent).toEqual(['Reconciling=True/NewGeneration']);
  // The pass starts, reading the policy with our write on top: its inspection takes long too, and announces
  // nothing more (the generation was attempted).
  announcer.started(KEY);
  const read = view.currentPolicy('team-a', 'orders')!;
  let finish: () => void = () => undefined;
  const inspection = announcer.inspecting(read, () => new Promise<void>((resolve) => (finish = resolve)));
  await elapse(RECONCILING_AFTER_MS);
  finish();
  await inspection;
  // Its execution waits in the executors' queue: the held Applying is not sent; the outcome is.
  await view.holdStatus(policy, executing, EXECUTING_STATUS_AFTER_MS);
  await elapse(60_000);
  await view.writeStatus(policy, applied, 'planApplied');
  expect(sent).toEqual(['Reconciling=True/NewGeneration', 'Ready=True/Reconciled']);
});

it('a pass that starts within the delay announces nothing for its wait', async () => {
  const { announcer, sent, elapse } = announcerOf();
  announcer.requested(KEY);
  announcer.started(KEY);
  await elapse(RECONCILING_AFTER_MS);
  expect(sent).toEqual([]);
});

it('a pass of a generation already attempted (a periodic pass, a result) sets no timer and writes nothing', async () => {
  const { announcer, sent, elapse, timersSet } = announcerOf({}, converged);
  announcer.requested(KEY);
  expect(timersSet()).toBe(0);
  await elapse(RECONCILING_AFTER_MS);
  expect(sent).toEqual([]);
});

it('a suspended policy, which its pass does not inspect, is not announced', async () => {
  const { announcer, sent, elapse } = announcerOf({ suspend: true });
  announcer.requested(KEY);
  await elapse(RECONCILING_AFTER_MS);
  expect(sent).toEqual([]);
});

it('a policy no longer followed when the delay ends is not announced', async () => {
  const { announcer, sent, elapse, forget } = announcerOf();
  announcer.requested(KEY);
  forget(); // deleted, or the replica stopped leading
  await elapse(RECONCILING_AFTER_MS);
  expect(sent).toEqual([]);
});

it('an inspection that outlasts the delay announces Reconciling beside it (no wait before the pass)', async () => {
  const { policy, announcer, sent, elapse } = announcerOf();
  let finish: (value: string) => void = () => undefined;
  const inspection = announcer.inspecting(policy, () => new Promise<string>((resolve) => (finish = resolve)));
  await elapse(RECONCILING_AFTER_MS);
  finish('planned');
  await expect(inspection).resolves.toBe('planned');
  expect(sent).toEqual(['Reconciling=True/NewGeneration']);
});
