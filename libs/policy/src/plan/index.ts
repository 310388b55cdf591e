// The planner's public surface: computePlan and its parts (mode filter, passwords, phases, summary).
// Callers normally need only computePlan / isConverged; the parts exist for tests and the review artifact.
export { computePlan, isConverged, type PlanInput, type PlanResult } from './compute-plan.js';
export { filterByMode } from './mode-filter.js';
export { selectPasswords, MISSING_SOURCE_SUFFIX } from './passwords.js';
export { groupPhases, orderChanges, phaseOf, type PlanPhase } from './phases.js';
export { summarise, summaryCounter } from './summary.js';
export {
  foreignGrantorBlocker,
  missingPredefinedRoleBlocker,
  PREDEFINED_ROLE_SINCE,
  perEdgeInheritBlocker,
  serverCompatibilityBlockers,
} from './server-compatibility.js';
