// The planner's read-your-writes view of plans under a cache that trails the API by any amount.
import type { PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import { OwnPlanWrites } from './own-plan-writes.js';

const CAP = 600_000;

const OWNER = 'policy-uid';

function plan(name: string, phase?: string, namespace = 'team-a', owner = OWNER): PostgresPolicyPlan {
  return {
    metadata: { name, namespace, ownerReferences: [{ uid: owner }] },
    spec: {},
    ...(phase === undefined ? {} : { status: { phase } }),
  } as unknown as PostgresPolicyPlan;
}

const phases = (plans: readonly PostgresPolicyPlan[]): Record<string, string | undefined> =>
  Object.fromEntries(plans.map((p) => [p.metadata.name, p.status?.phase]));

describe('plan overlay', () => {
  let now = 0;
  const overlay = (): OwnPlanWrites => new OwnPlanWrites(CAP, () => now);
  beforeEach(() => {
    now = 1_000;
  });

  it('shows a created plan however long the cache takes to show it, then only the cached one', () => {
    const view = overlay();
    view.planCreated(plan('p1', 'Pending'));
    now += 120_000; // far beyond the 30 s the overlay used to last
    expect(phases(view.plans('team-a', [], [OWNER]))).toEqual({ p1: 'Pending' });
    expect(view.plans('team-b', [], [OWNER])).toEqual([]);
    const cached = plan('p1', 'Approved');
    expect(view.plans('team-a', [cached], [OWNER])).toEqual([cached]);
    expect(view.size().created).toBe(0);
  });

  it('keeps an applied result over a cache that still shows the plan queued or running, however long', () => {
    for (const trailing of ['Pending', 'Approved', 'Applying', undefined]) {
      const view = overlay();
      view.resultHandled('team-a', 'p1', { phase: 'Applied', appliedAt: '2026-11-27T08:00:00Z' });
      now += 300_000;
      const [seen] = view.plans('team-a', [plan('p1', trailing)], [OWNER]);
      expect(seen?.status).toMatchObject({ phase: 'Applied', appliedAt: '2026-11-27T08:00:00Z' });
    }
  });

  it('gives way once the cache shows any phase past execution', () => {
    for (const caughtUp of ['Applied', 'Failed', 'Superseded', 'Rejected']) {
      const view = overlay();
      view.resultHandled('team-a', 'p1', { phase: 'Failed' });
      expect(phases(view.plans('team-a', [plan('p1', caughtUp)], [OWNER]))).toEqual({ p1: caughtUp });
      // Gone for good: a later (older) view of the plan is not overlaid any more.
      expect(view.size().handled).toBe(0);
    }
  });

  it('forgets a deleted plan, and bounds memory for plans the cache never shows', () => {
    const view = overlay();
    view.planCreated(plan('gone', 'Pending'));
    view.resultHandled('team-a', 'gone', { phase: 'Applied' });
    view.deleted('team-a', 'gone');
    expect(view.plans('team-a', [], [OWNER])).toEqual([]);
    expect(view.size()).toEqual({ created: 0, handled: 0 });

    view.planCreated(plan('never-seen', 'Pending'));
    view.resultHandled('team-a', 'late', { phase: 'Applied' });
    now += CAP + 1;
    expect(view.plans('team-a', [plan('late', 'Applying')], [OWNER])).toEqual([plan('late', 'Applying')]);
    expect(view.size()).toEqual({ created: 0, handled: 0 });
  });

  it("reads only the named owners' plans, and one plan by name", () => {
    const view = overlay();
    view.planCreated(plan('mine', 'Pending'));
    view.planCreated(plan('theirs', 'Pending', 'team-a', 'other-uid'));
    view.resultHandled('team-a', 'mine', { phase: 'Applied' });
    expect(phases(view.plans('team-a', [], [OWNER]))).toEqual({ mine: 'Applied' });
    expect(phases(view.plans('team-a', [], ['other-uid', OWNER]))).toEqual({
      theirs: 'Pending',
      mine: 'Applied',
    });
    expect(view.plan('team-a', 'theirs', undefined)?.status?.phase).toBe('Pending');
    expect(view.plan('team-a', 'mine', plan('mine', 'Applying'))?.status?.phase).toBe('Applied');
    expect(view.plan('team-a', 'unknown', undefined)).toBeUndefined();
  });
});
