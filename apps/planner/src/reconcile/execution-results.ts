// Executor results as the lifecycle's execution reports (pure): Applied, Failed (fail-closed identity
// reasons apart), Superseded; Applying is ignored and Skipped means "reconcile from fresh state".
import type { ExecuteResultV1 } from '@rolepolicy/contracts';
import type { ExecutionReport } from '../lifecycle/index.js';

/** Reasons under which the executor refused to run because the target's identity is not provable. */
const FAIL_CLOSED_REASONS = new Set(['TargetIdentityUnavailable', 'PhysicalIdentityRequired']);

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
        error: { class: result.errorClass ?? 'permanent', reason: result.reason, message: result.message },
      };
    default: {
      const unreachable: never = result.phase;
      return unreachable;
    }
  }
}
