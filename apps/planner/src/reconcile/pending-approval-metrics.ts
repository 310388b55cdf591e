// Plans waiting for a person: how many are Pending and how long the oldest has waited, computed from the
// planner's resource cache at scrape time, for the "plans pending approval too long" alert.
import { Gauge, type Registry } from 'prom-client';

/** The parts of a cached plan this reads. */
export type PlanLike = { readonly metadata: object; readonly status?: unknown };

/** Pending plans and the age in seconds of the oldest (0 when none), at `nowMs`. */
export function pendingApproval(
  plans: readonly PlanLike[],
  nowMs: number,
): { readonly count: number; readonly oldestSeconds: number } {
  let count = 0;
  let oldest = nowMs;
  for (const plan of plans) {
    const phase = (plan.status as { phase?: unknown } | undefined)?.phase;
    if (phase !== 'Pending') continue;
    count++;
    const created = Date.parse(String((plan.metadata as { creationTimestamp?: unknown }).creationTimestamp));
    if (!Number.isNaN(created)) oldest = Math.min(oldest, created);
  }
  return { count, oldestSeconds: count === 0 ? 0 : Math.max(0, (nowMs - oldest) / 1000) };
}

/** Registers `rp_plans_pending_approval` and `rp_plans_pending_approval_oldest_seconds`. */
export function registerPendingApprovalMetrics(registry: Registry, plans: () => readonly PlanLike[]): void {
  new Gauge({
    name: 'rp_plans_pending_approval',
    help: 'Plans in phase Pending (waiting for an Approved or Denied decision)',
    registers: [registry],
    collect() {
      this.set(pendingApproval(plans(), Date.now()).count);
    },
  });
  new Gauge({
    name: 'rp_plans_pending_approval_oldest_seconds',
    help: 'How long the oldest Pending plan has waited for a decision (0 when none waits)',
    registers: [registry],
    collect() {
      this.set(pendingApproval(plans(), Date.now()).oldestSeconds);
    },
  });
}
