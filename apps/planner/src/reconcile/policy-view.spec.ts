// The planner's policy status writes as a reader of the API sees them: a Ready=Unknown/Applying status held
// back while the execution's outcome may follow within a second (one write, the outcome's), sent when the
// execution takes longer, and its Events sent at once either way; one interim status per pass, so after an
// announced Reconciling the held status waits much longer (issue 28).
import type { CachedObject } from '@rolepolicy/contracts';
import type { AnnounceTimers } from '@rolepolicy/runtime';
import {
  reconcilingStatus,
  type PostgresPolicy,
  type PostgresPolicyStatus,
} from '@rolepolicy/plan-lifecycle';
import type { PlanEvent } from '../planning/plan-events.js';
import { policy as policyFixture } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { EXECUTING_STATUS_AFTER_INTERIM_MS, EXECUTING_STATUS_AFTER_MS } from './pass-timing.js';
import { newPolicyState } from './policy-state.js';
import { PolicyView } from './policy-view.js';

const ready = (status: 'True' | 'Unknown', reason: string) => ({
  type: 'Ready',
  status,
  reason,
  message: reason,
  last_transition_time: '2026-11-28T05:00:00Z',
});
const converged: PostgresPolicyStatus = {
  conditions: [
    ready('True', 'Reconciled'),
    { type: 'Drifted', status: 'False', reason: 'InSync', message: 'in sync' },
  ],
  last_successful_reconcile_time: '2026-11-28T05:00:00Z',
  current_plan_ref: null,
};
const executing: PostgresPolicyStatus = {
  ...converged,
  conditions: [
    ready('Unknown', 'Applying'),
    { type: 'Reconciling', status: 'True', reason: 'Applying', message: 'applying' },
    { type: 'Drifted', status: 'True', reason: 'DriftDetected', message: 'differs' },
  ],
  current_plan_ref: { name: 'orders-2' },
};
const applied: PostgresPolicyStatus = {
  ...converged,
  conditions: [
    ready('True', 'Reconciled'),
    { type: 'Drifted', status: 'False', reason: 'InSync', message: 'in sync' },
  ],
  current_plan_ref: { name: 'orders-2' },
};

/**
 * A view over one policy whose API copy is `status` (none: a new policy); timers fire only when the test
 * says so: `fire()` all of them, `elapse(ms)` those set for at most `ms`.
 */
function viewOf(status: PostgresPolicyStatus | undefined) {
  const policy: PostgresPolicy = policyFixture({}, {}, status);
  let cached = policy;
  const sent: Record<string, unknown>[] = [];
  const events: string[] = [];
  const pending: { fire: () => void; ms: number }[] = [];
  const timers: AnnounceTimers = {
    set: (fire, ms) => pending.push({ fire, ms }),
    clear: (handle) => {
      if (typeof handle === 'number') pending[handle - 1] = { fire: () => undefined, ms: 0 };
    },
  };
  const due = (ms: number) => {
    const fired = pending.filter((timer) => timer.ms <= ms);
    for (const timer of fired) pending[pending.indexOf(timer)] = { fire: () => undefined, ms: 0 };
    for (const timer of fired) timer.fire();
  };
  const state = newPolicyState('', policy.metadata.uid);
  const view = new PolicyView({
    cache: {
      get: () => cached as unknown as CachedObject,
      list: () => [],
      withFields: () => [],
    } as never,
    sink: {
      send: async (command) => {
        sent.push((command as { status: Record<string, unknown> }).status);
      },
      recordEvent: async (event: PlanEvent) => {
        events.push(event.event.reason);
      },
    },
    state: () => state,
    now: () => 0,
    timers,
  });
  const readyOf = (patch: Record<string, unknown>) =>
    (patch['conditions'] as { type: string; reason: string }[]).find((c) => c.type === 'Ready')?.reason;
  /** The spec is edited: the cache shows the policy at `generation`. */
  const edit = (generation: number): PostgresPolicy => {
    cached = { ...policy, metadata: { ...policy.metadata, generation } };
    return cached;
  };
  return { policy, view, sent, events, fire: () => due(Infinity), elapse: due, edit, readyOf };
}

it('an execution whose outcome follows within the delay: one status write, the outcome, on the API copy', async () => {
  const { policy, view, sent, fire, readyOf } = viewOf(converged);
  await view.holdStatus(policy, executing, 1_000);
  expect(sent).toEqual([]);
  // The next decision and the result handler read the held status as written.
  expect(view.currentPolicy('team-a', 'orders')?.status).toEqual(executing);
  await view.writeStatus(policy, applied, 'planApplied');
  fire(); // the delay passes after the outcome: nothing more is sent
  expect(sent.map(readyOf)).toEqual(['Reconciled']);
  expect(sent[0]?.['current_plan_ref']).toEqual({ name: 'orders-2' });
});

it('an execution that takes longer shows Ready=Unknown/Applying once the delay passed, then its outcome', async () => {
  const { policy, view, sent, fire, readyOf } = viewOf(converged);
  await view.holdStatus(policy, executing, 1_000);
  fire();
  await view.writeStatus(policy, applied, 'planApplied');
  expect(sent.map(readyOf)).toEqual(['Applying', 'Reconciled']);
});

describe('a pass sends at most one interim status before its outcome (issue 28)', () => {
  /** What a reader of the API sees in each status write: its Ready condition, or else its Reconciling one. */
  const shown = (patch: Record<string, unknown>): string => {
    const conditions = patch['conditions'] as { type: string; status: string; reason: string }[];
    const c = conditions.find((x) => x.type === 'Ready') ?? conditions.find((x) => x.type === 'Reconciling');
    return `${c?.type}=${c?.status}/${c?.reason}`;
  };

  it('slow inspection and slow execution (a fleet burst): Reconciling, then the outcome; Applying is recorded, not sent', async () => {
    const { policy, view, sent, elapse } = viewOf(undefined); // a new policy: no status yet
    // The inspection outlasted RECONCILING_AFTER_MS: the pass announced Reconciling (announceIfSlow).
    await view.writeStatus(policy, reconcilingStatus(policy, '2026-11-28T05:00:00Z')!);
    // Execution requested: Ready=Unknown/Applying held, read by the next decision and the result handler.
    await view.holdStatus(policy, executing, EXECUTING_STATUS_AFTER_MS);
    expect(view.currentPolicy('team-a', 'orders')?.status).toEqual(executing);
    // The execution waits in the executors' queue, a minute as in a 500-database burst.
    elapse(EXECUTING_STATUS_AFTER_MS);
    elapse(60_000);
    await view.writeStatus(policy, applied, 'planApplied');
    expect(sent.map(shown)).toEqual(['Reconciling=True/NewGeneration', 'Ready=True/Reconciled']);
  });

  it('after Reconciling, an execution that has not reported for EXECUTING_STATUS_AFTER_INTERIM_MS shows Applying', async () => {
    const { policy, view, sent, elapse } = viewOf(undefined);
    await view.writeStatus(policy, reconcilingStatus(policy, '2026-11-28T05:00:00Z')!);
    await view.holdStatus(policy, executing, EXECUTING_STATUS_AFTER_MS);
    elapse(EXECUTING_STATUS_AFTER_INTERIM_MS - 1);
    expect(sent.map(shown)).toEqual(['Reconciling=True/NewGeneration']);
    elapse(EXECUTING_STATUS_AFTER_INTERIM_MS);
    await view.writeStatus(policy, applied, 'planApplied');
    expect(sent.map(shown)).toEqual([
      'Reconciling=True/NewGeneration',
      'Ready=Unknown/Applying',
      'Ready=True/Reconciled',
    ]);
  });

  it('Reconciling of an older generation is no interim status of this one: Applying after a second', async () => {
    const { policy, view, sent, elapse, edit } = viewOf(undefined);
    await view.writeStatus(policy, reconcilingStatus(policy, '2026-11-28T05:00:00Z')!);
    await view.holdStatus(edit(2), executing, EXECUTING_STATUS_AFTER_MS);
    elapse(EXECUTING_STATUS_AFTER_MS);
    expect(sent.map(shown)).toEqual(['Reconciling=True/NewGeneration', 'Ready=Unknown/Applying']);
  });

  it('fast inspection, slow execution: Ready=Unknown/Applying once the delay passed, then the outcome', async () => {
    const { policy, view, sent, elapse } = viewOf(undefined);
    await view.holdStatus(policy, executing, EXECUTING_STATUS_AFTER_MS);
    elapse(EXECUTING_STATUS_AFTER_MS);
    await view.writeStatus(policy, applied, 'planApplied');
    expect(sent.map(shown)).toEqual(['Ready=Unknown/Applying', 'Ready=True/Reconciled']);
  });

  it('fast inspection, fast execution (one policy on an idle product): the outcome alone', async () => {
    const { policy, view, sent, fire } = viewOf(undefined);
    await view.holdStatus(policy, executing, EXECUTING_STATUS_AFTER_MS);
    await view.writeStatus(policy, applied, 'planApplied');
    fire();
    expect(sent.map(shown)).toEqual(['Ready=True/Reconciled']);
  });
});

it('the Events of a held status are sent at once: a converged policy that drifts is announced', async () => {
  const { policy, view, events } = viewOf(converged);
  await view.holdStatus(policy, executing, 1_000);
  expect(events).toEqual(['DriftDetected']);
  await view.writeStatus(policy, applied, 'planApplied');
  expect(events).toEqual(['DriftDetected']);
});

it('reads our status write over the cache until the cache shows the same status, then the cache again', async () => {
  const policy: PostgresPolicy = policyFixture({}, {}, converged);
  let cached: PostgresPolicy = policy;
  const state = newPolicyState('', policy.metadata.uid);
  const view = new PolicyView({
    cache: { get: () => cached as unknown as CachedObject, list: () => [], withFields: () => [] } as never,
    sink: { send: async () => undefined, recordEvent: async () => undefined },
    state: () => state,
    now: () => 0,
  });
  const { namespace, name } = policy.metadata;
  await view.writeStatus(policy, applied);
  // Read repeatedly while the cache lags: every read sees the write.
  for (let i = 0; i < 3; i++) expect(view.currentPolicy(namespace, name)?.status).toBe(applied);
  // The cache moves on with another status (someone else's write, or an older event): still ours on top.
  cached = { ...policy, status: { ...converged, last_error: 'other' } };
  expect(view.currentPolicy(namespace, name)?.status).toBe(applied);
  // The cache shows our status (as the API stores it: keys in another order, nulls dropped): the cache wins,
  // and a later cache status is read as it is.
  const { current_plan_ref: ref, ...rest } = applied;
  cached = { ...policy, status: { current_plan_ref: ref, ...rest, last_error: null } };
  const shown = view.currentPolicy(namespace, name)?.status;
  expect(shown).toEqual(cached.status);
  expect(shown).toHaveProperty('last_error', null); // the cache's copy, not our write
  cached = { ...policy, status: executing };
  expect(view.currentPolicy(namespace, name)?.status).toEqual(executing);
});
