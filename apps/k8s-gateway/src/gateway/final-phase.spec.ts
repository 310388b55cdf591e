// A status write never moves a plan out of Applied; everything else passes through.
import { finalPhaseLeft } from './final-phase.js';

describe('finalPhaseLeft', () => {
  it('refuses moving an Applied plan to any other phase', () => {
    for (const phase of ['Superseded', 'Failed', 'Applying', 'Approved', 'Pending', null]) {
      expect(finalPhaseLeft('PostgresPolicyPlan', { phase: 'Applied' }, { phase })).toMatch(
        /the plan is Applied: its phase is final/,
      );
    }
  });

  it('lets an Applied plan keep its phase and change other fields', () => {
    expect(finalPhaseLeft('PostgresPolicyPlan', { phase: 'Applied' }, { phase: 'Applied' })).toBeUndefined();
    expect(finalPhaseLeft('PostgresPolicyPlan', { phase: 'Applied' }, { lastError: null })).toBeUndefined();
  });

  it('leaves plans in other phases, and other kinds, alone', () => {
    expect(
      finalPhaseLeft('PostgresPolicyPlan', { phase: 'Approved' }, { phase: 'Superseded' }),
    ).toBeUndefined();
    expect(finalPhaseLeft('PostgresPolicyPlan', undefined, { phase: 'Applied' })).toBeUndefined();
    expect(
      finalPhaseLeft('EphemeralAccessRequest', { phase: 'Applied' }, { phase: 'Ended' }),
    ).toBeUndefined();
  });
});
