// Executor results as the lifecycle's execution reports (pure): Applied, Failed (fail-closed identity
// reasons apart), Superseded; Applying is ignored and Skipped means "reconcile from fresh state".
import type { ExecuteResultV1 } from '@rolepolicy/contracts';
import type { ConditionReason, ExecutionReport } from '@rolepolicy/plan-lifecycle';

/** Reasons under which the executor refused to run because the target's identity is not provable. */
const FAIL_CLOSED_REASONS = new Set(['TargetIdentityUnavailable', 'PhysicalIdentityRequired']);

/**
 * The policy's reason for a statement that failed, by SQLSTATE, in the peer operator's vocabulary; the
 * plan keeps the executor's own `ExecutionFailed`.
 */
const SQL_FAILURE_REASONS: Readonly<Record<string, ConditionReason>> = {
  '42501': 'InsufficientPrivileges',
  '3D000': 'MissingDatabaseObject',
  '3F000': 'MissingDatabaseObject',
  '42P01': 'MissingDatabaseObject',
  '42883': 'MissingDatabaseObject',
  '42704': 'MissingDatabaseObject',
};

function failureReason(result: ExecuteResultV1): string {
  if (result.reason !== 'ExecutionFailed') return result.reason;
  const sqlState = result.lastError?.sqlState ?? null;
  return (sqlState !== null && SQL_FAILURE_REASONS[sqlState]) || 'ApplyFailed';
}

/** The lifecycle's view of an executor result; `reconcile` means "look again from fresh state". */
export function reportOf(result: ExecuteResultV1): ExecutionReport | 'ignore' | 'reconcile' {
  switch (result.phase) {
    case 'Applying':
      return 'ignore';
    case 'Skipped':
      return 'reconcile';
    case 'Applied':
      return { kind: 'applied', appliedPasswordSourceVersions: result.appliedPasswordSourceVersions ?? {} };
    case 'Superseded':
      return {
        kind: 'refused',
        verdict: { kind: 'superseded', reason: result.reason, message: result.message },
      };
    case 'Failed':
      if (FAIL_CLOSED_REASONS.has(result.reason)) {
        return {
          kind: 'refused',
          verdict: { kind: 'fail_closed', reason: result.reason, message: result.message },
        };
      }
      return {
        kind: 'failed',
        error: {
          class: result.errorClass ?? 'permanent',
          reason: failureReason(result),
          message: result.message,
        },
      };
    default: {
      const unreachable: never = result.phase;
      return unreachable;
    }
  }
}
