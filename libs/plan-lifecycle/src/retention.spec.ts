// Issue 6: retention keeps the last N terminal plans per policy (configurable) and deletes older ones
// with their ConfigMaps; live plans are never deleted.
import { selectPlansForDeletion } from './retention.js';
import type { PlanPhase, PostgresPolicyPlan } from './resources.js';
import { at } from './test-support/fixtures.js';

function plan(
  name: string,
  phase: PlanPhase,
  t: number,
  opts: { keep?: boolean; sqlRef?: boolean } = {},
): PostgresPolicyPlan {
  return {
    metadata: {
      name,
      namespace: 'team-a',
      creationTimestamp: at(t),
      ...(opts.keep ? { labels: { 'rolepolicy.io/keep': 'true' } } : {}),
    },
    spec: {
      managedDatabaseIdentity: 'x',
      policyGeneration: 1,
      policyRef: { name: 'orders' },
      reconciliationMode: 'authoritative',
    },
    status: {
      phase,
      ...(phase === 'Applied' ? { appliedAt: at(t + 1) } : {}),
      ...(opts.sqlRef
        ? { sqlRef: { name: `${name}-sql`, key: 'plan.sql.gz', compression: 'gzip' as const } }
        : {}),
    },
  };
}

/** Long after every fixture plan ended. */
const LATER = at(10_000);

describe('plan retention', () => {
  it('keeps the newest N applied plans and deletes older ones with their ConfigMaps', () => {
    const plans = [
      plan('a1', 'Applied', 1, { sqlRef: true }),
      plan('a2', 'Applied', 2),
      plan('a3', 'Applied', 3),
    ];
    expect(
      selectPlansForDeletion(plans, { applied: 2, decided: 10, superseded: 3, minAgeSeconds: 0 }, LATER),
    ).toEqual([{ planName: 'a1', configMapName: 'a1-sql' }]);
  });

  it('pools Failed and Rejected plans in one bucket', () => {
    const plans = [plan('f1', 'Failed', 1), plan('r1', 'Rejected', 2), plan('f2', 'Failed', 3)];
    expect(
      selectPlansForDeletion(plans, { applied: 5, decided: 2, superseded: 3, minAgeSeconds: 0 }, LATER).map(
        (d) => d.planName,
      ),
    ).toEqual(['f1']);
  });

  it('keeps the newest superseded plans', () => {
    const plans = [1, 2, 3, 4, 5].map((t) => plan(`s${t}`, 'Superseded', t));
    expect(
      selectPlansForDeletion(plans, { applied: 5, decided: 5, superseded: 3, minAgeSeconds: 0 }, LATER).map(
        (d) => d.planName,
      ),
    ).toEqual(['s2', 's1']);
  });

  it('never deletes Pending, Approved or Applying plans', () => {
    const plans = [plan('p', 'Pending', 1), plan('a', 'Approved', 2), plan('x', 'Applying', 3)];
    expect(
      selectPlansForDeletion(plans, { applied: 0, decided: 0, superseded: 0, minAgeSeconds: 0 }, LATER),
    ).toEqual([]);
  });

  it('exempts plans labelled rolepolicy.io/keep=true', () => {
    const plans = [plan('old', 'Superseded', 1, { keep: true }), plan('new', 'Superseded', 2)];
    expect(
      selectPlansForDeletion(plans, { applied: 0, decided: 0, superseded: 0, minAgeSeconds: 0 }, LATER).map(
        (d) => d.planName,
      ),
    ).toEqual(['new']);
  });

  it('keeps a plan beyond the count until it ended at least minAgeSeconds ago', () => {
    const superseded = (name: string, t: number): PostgresPolicyPlan => {
      const p = plan(name, 'Superseded', 0);
      const conditions = [
        {
          type: 'Superseded',
          status: 'True' as const,
          reason: 'Superseded',
          message: 'x',
          last_transition_time: at(t),
        },
      ];
      return { ...p, status: { ...p.status, conditions } };
    };
    const plans = [superseded('s1', 10), superseded('s2', 100), superseded('s3', 200)];
    const settings = { applied: 5, decided: 5, superseded: 1, minAgeSeconds: 120 };
    // At t=150 only s1 ended more than 120 s ago; s2 is beyond the count but still young.
    expect(selectPlansForDeletion(plans, settings, at(150)).map((d) => d.planName)).toEqual(['s1']);
    expect(selectPlansForDeletion(plans, settings, at(230)).map((d) => d.planName)).toEqual(['s2', 's1']);
  });
});
