// Policy Events in the peer operator's reasons: announced on a transition, never repeated for an
// unchanged status; Recovered after a failure even when an apply (Ready=Unknown) came in between.
import { policyEventsOf, settledReady } from './policy-events.js';
import type { Condition, PostgresPolicyStatus } from './resources.js';

const c = (type: string, status: Condition['status'], reason: string, message = `${type} ${reason}`) => ({
  type,
  status,
  reason,
  message,
});
const status = (...conditions: Condition[]): PostgresPolicyStatus => ({ conditions });
const reasons = (events: { reason: string }[]) => events.map((e) => e.reason);

describe('policyEventsOf', () => {
  it('ConflictDetected once when Conflict turns True, ConflictResolved when it goes', () => {
    const conflicting = status(
      c('Ready', 'False', 'ConflictingPolicy'),
      c('Conflict', 'True', 'ConflictingPolicy', 'e2e/first claims role app'),
    );
    const detected = policyEventsOf(undefined, conflicting, undefined);
    expect(detected).toEqual([
      {
        type: 'Warning',
        reason: 'ConflictDetected',
        action: 'Reconcile',
        message: 'e2e/first claims role app',
      },
    ]);
    expect(policyEventsOf(conflicting, conflicting, 'False')).toEqual([]);
    const resolved = status(c('Ready', 'True', 'Reconciled'));
    expect(reasons(policyEventsOf(conflicting, resolved, 'False'))).toEqual([
      'ConflictResolved',
      'Recovered',
    ]);
  });

  it('SecretFetchFailed as a Warning when Ready turns False for a missing Secret or key, once', () => {
    const missing = status(c('Ready', 'False', 'SecretMissing', 'Secret "db" does not contain key "URL"'));
    expect(policyEventsOf(undefined, missing, undefined)).toEqual([
      {
        type: 'Warning',
        reason: 'SecretFetchFailed',
        action: 'Reconcile',
        message: 'Secret "db" does not contain key "URL"',
      },
    ]);
    expect(policyEventsOf(missing, missing, 'False')).toEqual([]);
    const unreachable = status(c('Ready', 'False', 'DatabaseConnectionFailed'));
    expect(reasons(policyEventsOf(missing, unreachable, 'False'))).toEqual(['DatabaseConnectionFailed']);
    expect(policyEventsOf(missing, status(c('Ready', 'False', 'PlanRetryDeferred')), 'False')).toEqual([]);
  });

  it('Recovered when Ready turns True after a failure, even through Ready=Unknown while applying', () => {
    const failed = status(c('Ready', 'False', 'DatabaseConnectionFailed'));
    const applying = status(c('Ready', 'Unknown', 'Applying'));
    const ready = status(c('Ready', 'True', 'Reconciled'));
    let settled = settledReady(failed, undefined);
    expect(policyEventsOf(failed, applying, settled)).toEqual([]);
    settled = settledReady(applying, settled);
    expect(settled).toBe('False');
    expect(reasons(policyEventsOf(applying, ready, settled))).toEqual(['Recovered']);
  });

  it('Reconciled the first time Ready turns True; nothing for Planned or for an apply after success', () => {
    const applying = status(c('Ready', 'Unknown', 'Applying'));
    const ready = status(c('Ready', 'True', 'Reconciled'));
    expect(reasons(policyEventsOf(applying, ready, undefined))).toEqual(['Reconciled']);
    expect(policyEventsOf(applying, ready, 'True')).toEqual([]);
    expect(policyEventsOf(undefined, status(c('Ready', 'True', 'Planned')), 'False')).toEqual([]);
  });

  it('no Reconciled for the write recording a plan applied: PlanApplied on the plan announces it', () => {
    const applying = status(c('Ready', 'Unknown', 'Applying'));
    const ready = status(c('Ready', 'True', 'Reconciled'));
    expect(policyEventsOf(applying, ready, undefined, 'planApplied')).toEqual([]);
    // A recovery through an apply tells something PlanApplied does not: the policy had failed.
    expect(reasons(policyEventsOf(applying, ready, 'False', 'planApplied'))).toEqual(['Recovered']);
    // Converged without an apply (the database already matched): Reconciled is the only announcement.
    expect(reasons(policyEventsOf(undefined, ready, undefined, 'pass'))).toEqual(['Reconciled']);
  });

  it('no DriftDetected for a policy never reconciled: its first plan announces itself (PlanApplied, PlanComputed)', () => {
    const applying: PostgresPolicyStatus = {
      conditions: [c('Ready', 'Unknown', 'Applying'), c('Drifted', 'True', 'DriftDetected')],
    };
    expect(policyEventsOf(undefined, applying, undefined)).toEqual([]);
    const awaiting: PostgresPolicyStatus = {
      conditions: [c('Ready', 'True', 'Planned'), c('Drifted', 'True', 'DriftDetected')],
    };
    expect(policyEventsOf(undefined, awaiting, undefined)).toEqual([]);
    // Observe mode reports drift and nothing else: its first reading is a successful reconcile, and drift is news.
    const observed = { ...awaiting, last_successful_reconcile_time: '2026-11-28T05:00:00Z' };
    expect(reasons(policyEventsOf(undefined, observed, undefined))).toEqual(['DriftDetected']);
    // A converged policy that drifts (whatever was written in between) is drift.
    const converged: PostgresPolicyStatus = {
      conditions: [c('Ready', 'True', 'Reconciled'), c('Drifted', 'False', 'InSync')],
      last_successful_reconcile_time: '2026-11-28T05:00:00Z',
    };
    expect(reasons(policyEventsOf(converged, { ...converged, ...applying }, 'True'))).toEqual([
      'DriftDetected',
    ]);
  });

  it('DriftDetected, ApprovalIgnored, ApprovalUnset and Suspended when their condition turns True', () => {
    const before: PostgresPolicyStatus = {
      ...status(c('Ready', 'True', 'Planned'), c('ApprovalUnset', 'True', 'InferredFromMode')),
      last_successful_reconcile_time: '2026-11-28T05:00:00Z',
    };
    const after: PostgresPolicyStatus = {
      ...before,
      conditions: [
        c('Ready', 'True', 'Planned'),
        c('ApprovalUnset', 'True', 'InferredFromMode'),
        c('Drifted', 'True', 'DriftDetected'),
        c('ApprovalIgnored', 'True', 'ObserveModeNeverExecutes'),
        c('Paused', 'True', 'Suspended'),
      ],
    };
    expect(policyEventsOf(before, after, 'True')).toEqual([
      { type: 'Normal', reason: 'DriftDetected', action: 'Reconcile', message: 'Drifted DriftDetected' },
      {
        type: 'Warning',
        reason: 'ApprovalIgnored',
        action: 'Reconcile',
        message: 'ApprovalIgnored ObserveModeNeverExecutes',
      },
      { type: 'Normal', reason: 'Suspended', action: 'Reconcile', message: 'Paused Suspended' },
    ]);
  });
});
