// Which terminal plans of one policy to delete: keep the newest N per terminal bucket, never touch live
// plans, plans labelled keep=true or plans that ended less than a minimum age ago, and delete a plan's
// SQL ConfigMap with it.

import { compareCodePoints } from '@rolepolicy/policy';
import { planPhase } from './approval.js';
import { KEEP_LABEL, type PostgresPolicyPlan } from './resources.js';

/** How many terminal plans of each kind a policy keeps (planner configuration, per policy). */
export interface RetentionSettings {
  /** Applied plans: the audit trail of what ran. */
  readonly applied: number;
  /** Failed and Rejected plans, pooled: evidence of what did not run. */
  readonly decided: number;
  /** Superseded plans: rarely interesting beyond the last few. */
  readonly superseded: number;
  /**
   * A plan that ended less than this long ago is kept even beyond its bucket's count: an execution
   * request may still be on its way to an executor (which would otherwise wait for a plan that is
   * gone), and a person may still be reading why it ended.
   */
  readonly minAgeSeconds: number;
}

/** Defaults: 25 applied, 10 failed/rejected, 3 superseded, none deleted within 5 minutes of its end. */
export const DEFAULT_RETENTION: RetentionSettings = {
  applied: 25,
  decided: 10,
  superseded: 3,
  minAgeSeconds: 300,
};

/** One deletion: the plan and, when its SQL was stored out of line, its ConfigMap. */
export interface PlanDeletion {
  readonly planName: string;
  readonly configMapName: string | null;
}

/** When the plan ended: appliedAt, failedAt, or its decisive condition's transition, else its creation. */
function endedAt(plan: PostgresPolicyPlan): string {
  const conditions = plan.status?.conditions ?? [];
  const transition = (type: string): string | undefined =>
    conditions.find((c) => c.type === type && c.status === 'True')?.last_transition_time ?? undefined;
  return (
    plan.status?.appliedAt ??
    plan.status?.failedAt ??
    transition('Superseded') ??
    transition('Denied') ??
    plan.metadata.creationTimestamp ??
    ''
  );
}

function sortKey(plan: PostgresPolicyPlan): string {
  return endedAt(plan);
}

/** Newest first by the bucket's time (RFC 3339 strings in UTC compare as times), then by name. */
function newestFirst(a: PostgresPolicyPlan, b: PostgresPolicyPlan): number {
  const ta = Date.parse(sortKey(a)) || 0;
  const tb = Date.parse(sortKey(b)) || 0;
  if (ta !== tb) return tb - ta;
  return compareCodePoints(b.metadata.name, a.metadata.name);
}

/**
 * Plans (already filtered to one policy by owner UID) to delete so that each terminal bucket keeps at
 * most its configured count. Pending, Approved and Applying plans are never deleted.
 */
export function selectPlansForDeletion(
  plans: readonly PostgresPolicyPlan[],
  settings: RetentionSettings,
  now: string,
): readonly PlanDeletion[] {
  const nowMs = Date.parse(now);
  const oldEnough = (plan: PostgresPolicyPlan): boolean => {
    const ended = Date.parse(endedAt(plan));
    return Number.isNaN(ended) || Number.isNaN(nowMs) || nowMs - ended >= settings.minAgeSeconds * 1000;
  };
  const buckets: Record<'applied' | 'decided' | 'superseded', PostgresPolicyPlan[]> = {
    applied: [],
    decided: [],
    superseded: [],
  };
  for (const plan of plans) {
    if (plan.metadata.labels?.[KEEP_LABEL] === 'true') continue;
    const phase = planPhase(plan);
    switch (phase) {
      case 'Applied':
        buckets.applied.push(plan);
        break;
      case 'Failed':
      case 'Rejected':
        buckets.decided.push(plan);
        break;
      case 'Superseded':
        buckets.superseded.push(plan);
        break;
      case 'Pending':
      case 'Approved':
      case 'Applying':
        break;
      default: {
        const unreachable: never = phase;
        throw new Error(`unknown plan phase ${String(unreachable)}`);
      }
    }
  }
  const out: PlanDeletion[] = [];
  for (const key of ['applied', 'decided', 'superseded'] as const) {
    const keep = Math.max(0, settings[key]);
    for (const plan of buckets[key].sort(newestFirst).slice(keep).filter(oldEnough)) {
      out.push({ planName: plan.metadata.name, configMapName: plan.status?.sqlRef?.name ?? null });
    }
  }
  return out;
}
