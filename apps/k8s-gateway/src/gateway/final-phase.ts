// A plan whose SQL ran stays Applied. The planner decides on its cache, which under a fleet's backlog can
// trail the API by tens of seconds; a pass on such a view read the database after the commit and found
// "nothing left to apply", and its Superseded write replaced the executor's Applied (500-database bench,
// 2026-11-27: 254 plans). The gateway, the one writer of every status, refuses a write that moves a plan
// out of Applied; the writer's next pass reads the Applied plan.

type Json = Record<string, unknown>;

/** Plan phases no status write may leave: the database already has the plan's effects. */
const FINAL_PLAN_PHASES: ReadonlySet<string> = new Set(['Applied']);

/**
 * Why a `patch-status` of `kind` would move the current status out of a final phase, or undefined when it
 * may be written.
 * @example finalPhaseLeft('PostgresPolicyPlan', { phase: 'Applied' }, { phase: 'Superseded' })
 */
export function finalPhaseLeft(kind: string, current: unknown, patch: Json): string | undefined {
  if (kind !== 'PostgresPolicyPlan') return undefined;
  const phase = (current as Json | null | undefined)?.['phase'];
  if (typeof phase !== 'string' || !FINAL_PLAN_PHASES.has(phase)) return undefined;
  if (!('phase' in patch) || patch['phase'] === phase) return undefined;
  return `the plan is ${phase}: its phase is final (the write was decided on an older view)`;
}
