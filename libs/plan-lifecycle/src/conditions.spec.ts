// Spec: conditions are one per type, at most 16; last_transition_time changes only when status changes.
import { MAX_CONDITIONS, reconcileConditions, withConditions } from './conditions.js';
import type { Condition } from './resources.js';

const T0 = '2026-11-21T12:00:00.000Z';
const T1 = '2026-11-21T12:05:00.000Z';

describe('conditions', () => {
  it('keeps last_transition_time when only reason or message change', () => {
    const first = reconcileConditions([], { Ready: { status: 'True', reason: 'Planned', message: 'a' } }, T0);
    const second = reconcileConditions(
      first,
      { Ready: { status: 'True', reason: 'Reconciled', message: 'b' } },
      T1,
    );
    expect(second).toEqual([
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'b', last_transition_time: T0 },
    ]);
  });

  it('moves last_transition_time when the status value changes', () => {
    const first = reconcileConditions(
      [],
      { Ready: { status: 'True', reason: 'Reconciled', message: '' } },
      T0,
    );
    const second = reconcileConditions(
      first,
      { Ready: { status: 'False', reason: 'ApplyFailed', message: '' } },
      T1,
    );
    expect(second[0]?.last_transition_time).toBe(T1);
  });

  it('removes managed types set to null and keeps foreign ones', () => {
    const prior: Condition[] = [
      { type: 'Drifted', status: 'True' },
      { type: 'ExternalCheck', status: 'True' },
    ];
    const out = reconcileConditions(
      prior,
      { Drifted: null, Ready: { status: 'True', reason: 'r', message: 'm' } },
      T0,
    );
    expect(out.map((c) => c.type)).toEqual(['Ready', 'ExternalCheck']);
  });

  it('collapses duplicate entries of one type to a single condition', () => {
    const prior: Condition[] = [
      { type: 'Approved', status: 'False', reason: 'PendingApproval' },
      { type: 'Approved', status: 'True', reason: 'Reviewed' },
    ];
    const out = withConditions(
      prior,
      { Computed: { status: 'True', reason: 'PlanComputed', message: '' } },
      T0,
    );
    expect(out.filter((c) => c.type === 'Approved')).toHaveLength(1);
  });

  it('never holds more than 16 conditions; foreign entries give way to ours', () => {
    const prior: Condition[] = Array.from({ length: 20 }, (_, i) => ({
      type: `Foreign${i}`,
      status: 'True' as const,
    }));
    const out = withConditions(
      prior,
      { Superseded: { status: 'True', reason: 'Superseded', message: '' } },
      T0,
    );
    expect(out).toHaveLength(MAX_CONDITIONS);
    expect(out.some((c) => c.type === 'Superseded')).toBe(true);
    expect(
      reconcileConditions(prior, { Ready: { status: 'True', reason: 'r', message: '' } }, T0),
    ).toHaveLength(MAX_CONDITIONS);
  });
});
