// The Kubernetes Events of a candidate's lifecycle (pure): one per phase it enters, and one when its Ready
// turns False for a new reason (waiting its turn, or a planning failure a person must act on). The gateway
// writes and deduplicates them; `kubectl describe postgrespolicycandidate <name>` lists them.
import type { PlanEvent } from '../planning/plan-events.js';
import { PLANNER_COMPONENT } from '../planning/plan-events.js';
import { candidateRef, type CandidatePhase, type CandidateStatus } from './resources.js';
import type { CandidateStep } from './steps.js';

type Shape = { readonly type: 'Normal' | 'Warning'; readonly reason: string; readonly action: string };

const ENTERED: Readonly<Record<CandidatePhase, Shape | null>> = {
  Pending: null,
  Planned: { type: 'Normal', reason: 'CandidatePlanned', action: 'Plan' },
  Promoted: { type: 'Normal', reason: 'CandidatePromoted', action: 'Promote' },
  Superseded: { type: 'Normal', reason: 'CandidateSuperseded', action: 'Supersede' },
  Stale: { type: 'Warning', reason: 'CandidateStale', action: 'Plan' },
};

/** Ready=False reasons that mean the candidate waits its turn (the policy's convergence, a budget slot). */
const WAITING_REASONS = new Set(['BlockedByActivePolicy', 'CandidateBudgetExceeded']);
const WAITING: Shape = { type: 'Normal', reason: 'CandidateWaiting', action: 'Plan' };
const PLANNING_FAILED: Shape = { type: 'Warning', reason: 'CandidatePlanningFailed', action: 'Plan' };

function ready(status: CandidateStatus | undefined) {
  return status?.conditions?.find((c) => c.type === 'Ready');
}

function messageOf(status: CandidateStatus, fallback: string): string {
  const condition = ready(status);
  const why = condition?.message ? `: ${condition.message}` : '';
  const plan = status.planRef?.name ? ` (plan ${status.planRef.name})` : '';
  return `${condition?.reason ?? fallback}${plan}${why}`;
}

/** The Events a candidate step announces (only status writes announce anything). */
export function candidateEventsOf(step: CandidateStep): readonly PlanEvent[] {
  if (step.kind !== 'writeCandidateStatus') return [];
  const before = step.candidate.status;
  const after = step.status;
  const regarding = candidateRef(step.candidate);
  const phase = after.phase ?? 'Pending';
  const event = (shape: Shape, message: string): PlanEvent => ({
    regarding,
    event: { ...shape, message, component: PLANNER_COMPONENT },
  });
  if (phase !== (before?.phase ?? 'Pending')) {
    const shape = ENTERED[phase];
    if (shape !== null) return [event(shape, messageOf(after, phase))];
  }
  const readyAfter = ready(after);
  const readyBefore = ready(before);
  if (
    readyAfter?.status !== 'False' ||
    (readyBefore?.status === 'False' && readyBefore.reason === readyAfter.reason)
  ) {
    return [];
  }
  const shape = WAITING_REASONS.has(readyAfter.reason ?? '') ? WAITING : PLANNING_FAILED;
  return [event(shape, messageOf(after, 'NotPlanned'))];
}
