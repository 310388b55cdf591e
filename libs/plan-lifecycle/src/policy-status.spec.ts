// Spec PostgresPolicy status: Reconciling is announced once per generation; unchanged status is not rewritten.
import type { PostgresPolicyStatus } from './resources.js';
import { reconcilingStatus, sameKeptStatus, sameStatus } from './policy-status.js';
import { at, policy } from './test-support/fixtures.js';

describe('policy status writes', () => {
  it('announces Reconciling=True for a generation not attempted yet, keeping Ready as it was', () => {
    const p = policy(
      {},
      { generation: 3 },
      {
        last_attempted_generation: 2,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'ok', last_transition_time: at(0) },
        ],
      },
    );
    const status = reconcilingStatus(p, at(10));
    expect(status?.last_attempted_generation).toBe(3);
    expect(status?.conditions?.find((c) => c.type === 'Reconciling')).toMatchObject({ status: 'True' });
    expect(status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      last_transition_time: at(0),
    });
  });

  it('does not write again while retrying the same generation (retries must not pre-empt backoff)', () => {
    expect(
      reconcilingStatus(policy({}, { generation: 3 }, { last_attempted_generation: 3 }), at(10)),
    ).toBeNull();
  });

  it('treats null and absent fields alike (a merge patch deletes null fields)', () => {
    expect(sameStatus({ last_error: null, owned_roles: ['a'] }, { owned_roles: ['a'] })).toBe(true);
    expect(sameStatus({ last_error: 'x' }, {})).toBe(false);
  });

  it("sameKeptStatus, which keeps each object's text, decides as sameStatus on every pair, repeated", () => {
    const ready = (status: 'True' | 'False', reason: string) => ({
      type: 'Ready',
      status,
      reason,
      message: reason,
      last_transition_time: at(0),
    });
    const statuses: (PostgresPolicyStatus | undefined)[] = [
      undefined,
      {},
      { last_error: null },
      { last_error: 'x' },
      { owned_roles: ['a'], last_error: null },
      { last_error: null, owned_roles: ['a'] },
      { owned_roles: ['b'] },
      { conditions: [ready('True', 'Reconciled')] },
      { conditions: [ready('True', 'Reconciled')], current_plan_ref: null },
      { conditions: [ready('False', 'Failed')] },
      { conditions: [ready('True', 'Reconciled')], current_plan_ref: { name: 'p-1' } },
      { current_plan_ref: { name: 'p-1' }, conditions: [ready('True', 'Reconciled')] },
      { current_plan_ref: { name: 'p-2' }, conditions: [ready('True', 'Reconciled')] },
    ];
    for (let round = 0; round < 2; round++) {
      for (const a of statuses) {
        for (const b of statuses) expect([a, b, sameKeptStatus(a, b)]).toEqual([a, b, sameStatus(a, b)]);
      }
    }
  });
});
