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
/**
 * When the policy already shows an interim status of this generation (the pass announced `Reconciling`, or
 * an earlier `Applying` went out), the execution's `Ready=Unknown/Applying` is sent only after this: a pass
 * writes one interim status before its outcome (issue 28). A reader sees `Reconciling=True` (in progress,
 * `observed_generation` behind) until the outcome, and the plan's own phase, written by the executor
 * (`Approved` while queued, `Applying` with `applyingSince` while its SQL runs), shows where the apply is.
 * It must outlast an executor queue in a burst, or the write comes back exactly there: in the 500-database
 * run of bench/results/fleet.json the median plan was computed 43 s after creation and its SQL started at
 * 102 s. Half of {@link LIVE_PLAN_WAIT_MS}: an execution that has not reported for this long is shown as
 * applying well before the planner stops waiting for it.
 */
export const EXECUTING_STATUS_AFTER_INTERIM_MS = LIVE_PLAN_WAIT_MS / 2;
/** Re-check delay of a pass that deferred to a pending result. */
export const RESULT_RECHECK_MS = 5_000;
