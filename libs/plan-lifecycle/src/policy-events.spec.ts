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

  it('DriftDetected, ApprovalIgnored, ApprovalUnset and Suspended when their condition turns True', () => {
    const before = status(c('Ready', 'True', 'Planned'), c('ApprovalUnset', 'True', 'InferredFromMode'));
    const after = status(
      c('Ready', 'True', 'Planned'),
      c('ApprovalUnset', 'True', 'InferredFromMode'),
      c('Drifted', 'True', 'DriftDetected'),
      c('ApprovalIgnored', 'True', 'ObserveModeNeverExecutes'),
      c('Paused', 'True', 'Suspended'),
    );
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
