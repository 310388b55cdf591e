// The planner reconciler's waits and bounds, in one place (reconciler.ts reads them).
import { LIVE_PLAN_WAIT_MS } from './policy-state.js';

/**
 * How long a post-apply snapshot may wait for the pass after its Applied result (they are sent a few ms
 * apart, but under load the pass waits its turn: a shorter wait turned that confirmation into a second
 * inspection per policy exactly when the fleet was busiest; ADR 0017).
 */
export const APPLIED_SNAPSHOT_TTL_MS = LIVE_PLAN_WAIT_MS;
/** Post-apply snapshots kept at most (one per policy; a fleet's burst of applies). */
export const APPLIED_SNAPSHOT_MAX_KEPT = 2_000;
/** `Reconciling` (NewGeneration) is written only when the inspection outlasts this (one API write less). */
export const RECONCILING_AFTER_MS = 1_000;
/**
 * A policy status `Ready=Unknown/Applying` (execution requested) is sent only when the execution's outcome
 * has not followed within this (one API write less per apply; policy-view.ts `holdStatus`).
 */
export const EXECUTING_STATUS_AFTER_MS = 1_000;
/** Re-check delay of a pass that deferred to a pending result. */
export const RESULT_RECHECK_MS = 5_000;
