// The Kubernetes Events a policy status write announces (pure), in the peer operator's reasons: a
// transition between the status before and after a write, never a repeat of an unchanged one. Sent
// through the gateway's record-event command once that lands (docs/peer-e2e.md, "Events").
import { findCondition } from './conditions.js';
import type { Condition, PostgresPolicyStatus } from './resources.js';

/** One Event about the policy (involved object = the PostgresPolicy). */
export interface PolicyEvent {
  readonly type: 'Normal' | 'Warning';
  /** UpperCamelCase, the peer operator's reason. */
  readonly reason: string;
  /** UpperCamelCase: what happened. */
  readonly action: string;
  readonly message: string;
}

/** Ready=False reasons announced as Warning Events under their own name (others stay status-only). */
const WARNED_FAILURES: Readonly<Record<string, string>> = {
  SecretFetchFailed: 'SecretFetchFailed',
  SecretMissing: 'SecretFetchFailed',
  InvalidSpec: 'InvalidSpec',
  DatabaseConnectionFailed: 'DatabaseConnectionFailed',
  InsufficientPrivileges: 'InsufficientPrivileges',
};

function became(before: Condition | undefined, after: Condition | undefined, status: string): boolean {
  return after?.status === status && before?.status !== status;
}

/**
 * The last settled `Ready` status (True or False) after `status` was written, given the one before: an
 * `Unknown` (a plan being applied) keeps the previous one, so a failure followed by an apply still
 * reads as failed when `Ready` turns True. The caller keeps it per policy between writes.
 */
export function settledReady(
  status: PostgresPolicyStatus | null | undefined,
  previous: 'True' | 'False' | undefined,
): 'True' | 'False' | undefined {
  const ready = findCondition(status?.conditions, 'Ready')?.status;
  return ready === 'True' || ready === 'False' ? ready : previous;
}

/**
 * What a policy status write records: a pass's outcome, or an executor's Applied result (which the plan's
 * own `PlanApplied` Event announces, so the policy does not repeat it).
 */
export type PolicyWriteCause = 'pass' | 'planApplied';

/**
 * True once a reconcile of the policy succeeded (converged, applied, or observed), before or with this
 * write: only then is `Drifted=True` news. A policy's first plan announces itself (PlanApplied, PlanFailed,
 * PlanComputed); observe mode, which only reports drift, succeeds with its first reading.
 */
function everReconciled(
  before: PostgresPolicyStatus | null | undefined,
  after: PostgresPolicyStatus,
): boolean {
  return (before?.last_successful_reconcile_time ?? after.last_successful_reconcile_time ?? null) !== null;
}

/**
 * Events for the move from `before` to `after` (the policy's status before and after one write);
 * `settled` is {@link settledReady} of `before`. `Recovered` when `Ready` turns True (not `Planned`) after
 * a False, `Reconciled` the first time it does unless the write records a plan applied (`PlanApplied`
 * said it); `DriftDetected` only for a policy reconciled before (issue 28: one Event per outcome).
 * @example policyEventsOf(failing, ready, 'False') // [{ type: 'Normal', reason: 'Recovered', ... }]
 */
export function policyEventsOf(
  before: PostgresPolicyStatus | null | undefined,
  after: PostgresPolicyStatus,
  settled: 'True' | 'False' | undefined,
  cause: PolicyWriteCause = 'pass',
): PolicyEvent[] {
  const was = (type: string) => findCondition(before?.conditions, type);
  const now = (type: string) => findCondition(after.conditions, type);
  const events: PolicyEvent[] = [];
  const conflict = now('Conflict');
  if (became(was('Conflict'), conflict, 'True')) {
    events.push({
      type: 'Warning',
      reason: 'ConflictDetected',
      action: 'Reconcile',
      message: conflict!.message ?? '',
    });
  } else if (was('Conflict')?.status === 'True' && conflict?.status !== 'True') {
    events.push({
      type: 'Normal',
      reason: 'ConflictResolved',
      action: 'Reconcile',
      message: 'no overlapping claims left',
    });
  }
  const ready = now('Ready');
  const previous = was('Ready');
  if (ready?.status === 'False' && ready.reason != null && WARNED_FAILURES[ready.reason] !== undefined) {
    if (previous?.status !== 'False' || previous.reason !== ready.reason) {
      events.push({
        type: 'Warning',
        reason: WARNED_FAILURES[ready.reason]!,
        action: 'Reconcile',
        message: ready.message ?? '',
      });
    }
  }
  const readyNews = settled === 'False' || cause !== 'planApplied';
  if (became(previous, ready, 'True') && ready!.reason !== 'Planned' && settled !== 'True' && readyNews) {
    events.push({
      type: 'Normal',
      reason: settled === 'False' ? 'Recovered' : 'Reconciled',
      action: 'Reconcile',
      message: ready!.message ?? '',
    });
  }
  for (const [type, reason, kind] of [
    ['Drifted', 'DriftDetected', 'Normal'],
    ['ApprovalIgnored', 'ApprovalIgnored', 'Warning'],
    ['ApprovalUnset', 'ApprovalUnset', 'Warning'],
    ['Paused', 'Suspended', 'Normal'],
  ] as const) {
    const condition = now(type);
    if (type === 'Drifted' && !everReconciled(before, after)) continue;
    if (became(was(type), condition, 'True')) {
      events.push({ type: kind, reason, action: 'Reconcile', message: condition!.message ?? '' });
    }
  }
  return events;
}
