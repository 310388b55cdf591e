// How mode and approval combine into an execution gate, and how a plan's recorded decision is read.
// Decisions are status conditions written by people (or by the planner under auto approval).

import { findCondition, isConditionTrue } from './conditions.js';
import type {
  ApprovalMode,
  DecidedBy,
  PlanPhase,
  PolicyMode,
  PostgresPolicyPlan,
  PostgresPolicySpec,
} from './resources.js';

/** Identity recorded as `decidedBy` when the planner approves under `approval: auto`. */
export const AUTO_APPROVER: DecidedBy = { username: 'system:rolepolicy-planner(auto-approval)', groups: [] };

/** The approval mode in force and whether it was inferred (which raises `ApprovalUnset`). */
export interface EffectiveApproval {
  readonly approval: ApprovalMode;
  readonly inferred: boolean;
}

/** `spec.mode` with the API-server default (`apply`) applied. */
export function effectiveMode(spec: PostgresPolicySpec): PolicyMode {
  return spec.mode ?? 'apply';
}

/**
 * The spec's deprecated inference: an omitted approval is `auto` in apply mode and `manual` otherwise
 * (observe; plan is a review mode, so it infers manual too).
 */
export function effectiveApproval(spec: PostgresPolicySpec): EffectiveApproval {
  if (spec.approval === 'auto' || spec.approval === 'manual')
    return { approval: spec.approval, inferred: false };
  return { approval: effectiveMode(spec) === 'apply' ? 'auto' : 'manual', inferred: true };
}

/**
 * Who may release a plan for execution:
 * - `auto`: the planner approves and requests execution itself (apply + auto);
 * - `manual`: only a terminal `Approved=True` written by a person (apply + manual, and plan mode with
 *   any approval: plan mode publishes plans for review and never self-approves);
 * - `never`: observe mode computes drift and publishes plans, but nothing executes.
 */
export type ExecutionGate = 'auto' | 'manual' | 'never';

/** Evaluates the gate in the spec's order: mode, then approval. */
export function executionGate(spec: PostgresPolicySpec): ExecutionGate {
  const mode = effectiveMode(spec);
  switch (mode) {
    case 'observe':
      return 'never';
    case 'plan':
      return 'manual';
    case 'apply':
      return effectiveApproval(spec).approval;
    default: {
      const unreachable: never = mode;
      return unreachable;
    }
  }
}

/** The decision recorded on a plan. Denied wins over Approved if both were ever present (fail closed). */
export type PlanDecision = 'approved' | 'denied' | 'undecided';

/** Reads the terminal decision from a plan's conditions. */
export function planDecision(plan: PostgresPolicyPlan): PlanDecision {
  const conditions = plan.status?.conditions;
  if (isConditionTrue(conditions, 'Denied')) return 'denied';
  if (isConditionTrue(conditions, 'Approved')) return 'approved';
  return 'undecided';
}

/** `status.phase` with its default (`Pending`). */
export function planPhase(plan: PostgresPolicyPlan): PlanPhase {
  return plan.status?.phase ?? 'Pending';
}

/** Phases in which a plan may still be executed or decided. */
export const LIVE_PHASES: readonly PlanPhase[] = ['Pending', 'Approved', 'Applying'];

/** True for Applied, Failed, Superseded and Rejected. */
export function isTerminalPhase(phase: PlanPhase): boolean {
  return !LIVE_PHASES.includes(phase);
}

/** True when the plan was approved by the planner itself rather than by a person. */
export function isAutoApproved(plan: PostgresPolicyPlan): boolean {
  return findCondition(plan.status?.conditions, 'Approved')?.reason === 'AutoApproved';
}
