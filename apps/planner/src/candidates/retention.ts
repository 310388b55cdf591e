// Retention of terminal candidates (docs/candidates.md, section 3): per policy, the newest `retainTerminal`
// Promoted/Superseded candidates stay; older ones are deleted with their plans and SQL ConfigMaps. A keep
// label on the candidate or any of its plans exempts it. Pure.
import { KEEP_LABEL, type PostgresPolicyPlan, toMillis } from '@rolepolicy/plan-lifecycle';
import { isCandidatePlan } from './candidate-plan.js';
import type { CandidatePassInput } from './pass.js';
import { isTerminalCandidate, type Candidate, type CandidateStatus } from './resources.js';
import type { CandidateStep } from './steps.js';

function endedAt(candidate: Candidate, status: CandidateStatus | undefined): number {
  const times = (status?.conditions ?? [])
    .filter((c) => (c.type === 'Superseded' || c.type === 'Promoted') && c.status === 'True')
    .map((c) => toMillis(c.last_transition_time) ?? 0);
  return Math.max(toMillis(candidate.metadata.creationTimestamp) ?? 0, ...times);
}

/** Deletion steps for terminal candidates beyond the retention count, oldest end first. */
export function retainTerminal(
  input: CandidatePassInput,
  decided: ReadonlyMap<string, { readonly status: CandidateStatus }>,
): readonly CandidateStep[] {
  const terminal = input.candidates.filter(
    (c) =>
      isTerminalCandidate(c) && !decided.has(c.metadata.name) && c.metadata.deletionTimestamp === undefined,
  );
  if (terminal.length <= input.settings.retainTerminal) return [];
  const plansOf = (c: Candidate): PostgresPolicyPlan[] => input.plans.filter((p) => isCandidatePlan(p, c));
  const exempt = (c: Candidate) =>
    c.metadata.labels?.[KEEP_LABEL] === 'true' ||
    plansOf(c).some((p) => p.metadata.labels?.[KEEP_LABEL] === 'true');
  const newestFirst = [...terminal].sort((a, b) => endedAt(b, b.status) - endedAt(a, a.status));
  return newestFirst
    .slice(input.settings.retainTerminal)
    .filter((c) => !exempt(c))
    .map((candidate) => ({
      kind: 'deleteCandidate' as const,
      candidate,
      plans: plansOf(candidate).map((p) => ({
        planName: p.metadata.name,
        configMapName: p.status?.sqlRef?.name ?? null,
      })),
    }));
}
