// computePlan: diff -> mode filter -> unmanaged-role filter -> passwords -> order, phases, summary.
// Pure and deterministic: the same input gives byte-identical output regardless of input array order.

import { compareCodePoints } from '../canonical-order.js';
import { diff } from '../diff/diff.js';
import { filterUnmanaged } from '../diff/unmanaged.js';
import type { Change, ChangeSummary } from '../model/change.js';
import type { DesiredState } from '../model/desired.js';
import type { CatalogSnapshot } from '../model/snapshot.js';
import type { ReconciliationMode } from '../model/vocabulary.js';
import { filterByMode } from './mode-filter.js';
import { selectPasswords } from './passwords.js';
import { serverCompatibilityBlockers } from './server-compatibility.js';
import { groupPhases, orderChanges, type PlanPhase } from './phases.js';
import { summarise } from './summary.js';

/** Everything a plan is computed from. */
export interface PlanInput {
  readonly desired: DesiredState;
  readonly snapshot: CatalogSnapshot;
  readonly mode: ReconciliationMode;
  /** role -> current password source version (`secretName:secretKey:resourceVersion`, or `...:missing`). */
  readonly passwordSources: Readonly<Record<string, string>>;
  /** role -> source version last applied (`status.applied_password_source_versions`). */
  readonly appliedPasswordSourceVersions: Readonly<Record<string, string>>;
  readonly allowSchemaOwnerTransfers: boolean;
}

/** A computed plan. `changes` are in execution order; `phases` index into them. */
export interface PlanResult {
  readonly changes: readonly Change[];
  readonly phases: readonly PlanPhase[];
  readonly summary: ChangeSummary;
  /** `plan_warnings`: adopt-mode owner transfers, warnings found while expanding. Sorted. */
  readonly warnings: readonly string[];
  /** adopt mode, a schema owner transfer, and transfers not allowed: the `OwnerTransferBlocked` input. */
  readonly ownerTransferBlocked: boolean;
  /** additive mode with absence assertions or exclusive stanzas, which it ignores (warning condition). */
  readonly additiveIgnoredAbsence: boolean;
  /**
   * Conditions that refuse the plan (unsatisfiable wildcards, missing functions, unknown password sources,
   * server_compatibility: per-membership inherit before PostgreSQL 16, foreign membership grantors on 16+).
   */
  readonly blockers: readonly string[];
}

/**
 * Computes the plan for one policy against one snapshot (engine notes 3.2-3.9).
 * @example `computePlan({ desired, snapshot, mode: 'authoritative', passwordSources: {}, appliedPasswordSourceVersions: {}, allowSchemaOwnerTransfers: false })`
 */
export function computePlan(input: PlanInput): PlanResult {
  const { desired, snapshot, mode } = input;
  const full = diff(desired, snapshot, { ownerTransfersApply: mode !== 'additive' });
  const filtered = filterUnmanaged(filterByMode(full.changes, mode), desired);
  const passwords = selectPasswords(
    filtered,
    desired.roles,
    input.passwordSources,
    input.appliedPasswordSourceVersions,
  );
  const changes = orderChanges([...filtered, ...passwords.passwords]);
  const transfers = changes.flatMap((c) => (c.kind === 'alter_schema_owner' ? [c] : []));
  const warnings = [...desired.warnings];
  if (mode === 'adopt') {
    for (const t of transfers) {
      const from = snapshot.schemas.find((s) => s.name === t.name)?.owner ?? null;
      warnings.push(
        `adopt mode transfers ownership of schema ${t.name} from ${from ?? 'unknown'} to ${t.owner}`,
      );
    }
  }
  return {
    changes,
    phases: groupPhases(changes),
    summary: summarise(changes),
    warnings: sortedUnique(warnings),
    ownerTransferBlocked: mode === 'adopt' && transfers.length > 0 && !input.allowSchemaOwnerTransfers,
    additiveIgnoredAbsence:
      mode === 'additive' &&
      (desired.grant_absences.length > 0 ||
        desired.default_privilege_absences.length > 0 ||
        desired.exclusive_membership_roles.length > 0),
    blockers: sortedUnique([
      ...full.blockers,
      ...passwords.blockers,
      ...serverCompatibilityBlockers(desired, snapshot, changes),
    ]),
  };
}

/** True when the plan changes nothing (the live state matches the policy under its mode). */
export function isConverged(plan: Pick<PlanResult, 'changes'>): boolean {
  return plan.changes.length === 0;
}

function sortedUnique(values: readonly string[]): readonly string[] {
  return [...new Set(values)].sort(compareCodePoints);
}
