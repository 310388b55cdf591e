// The planner's read-your-writes view of plans: the cache, with the plans this replica created and the
// execution results it handled on top until the cache shows them. Under a fleet's backlog the cache trails
// the API by tens of seconds or more; a pass deciding on the bare cache would miss a plan it just created
// (and create a second one) or read an applied plan as still pending (and supersede it: 254 plans in a
// 500-database bench run, 2026-11-27, when this overlay still expired after 30 s). So nothing here expires
// on a clock while the cache trails: an entry goes when the cache has caught up with it, when the plan is
// deleted, or after `capMs`, a bound on memory for plans whose every event the stream compacted away.
import type { PostgresPolicyPlan, PostgresPolicyPlanStatus } from '@rolepolicy/plan-lifecycle';

/** Plan phases before a result: a cached plan in one of them trails a terminal result we handled. */
const BEFORE_RESULT: ReadonlySet<string | undefined> = new Set([
  undefined,
  'Pending',
  'Approved',
  'Applying',
]);

const planKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class PlanOverlay {
  /** Plans we created that the cache has not shown yet. */
  private readonly created = new Map<string, { plan: PostgresPolicyPlan; at: number }>();
  /** Terminal statuses (Applied, Failed) of results we handled whose phase the cache does not show yet. */
  private readonly handled = new Map<string, { status: PostgresPolicyPlanStatus; at: number }>();

  constructor(
    private readonly capMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A plan this replica created (through the gateway). */
  planCreated(plan: PostgresPolicyPlan): void {
    this.created.set(planKey(plan.metadata.namespace, plan.metadata.name), { plan, at: this.now() });
  }

  /** An execution result's terminal plan status (the executor writes it through the gateway). */
  resultHandled(namespace: string, name: string, status: PostgresPolicyPlanStatus): void {
    this.handled.set(planKey(namespace, name), { status, at: this.now() });
  }

  /** The cache reported the plan deleted: nothing of ours stands for it any more. */
  deleted(namespace: string, name: string): void {
    this.created.delete(planKey(namespace, name));
    this.handled.delete(planKey(namespace, name));
  }

  /** The namespace's plans as the next decision must see them: `cached` with our newer writes on top. */
  plans(namespace: string, cached: readonly PostgresPolicyPlan[]): PostgresPolicyPlan[] {
    const now = this.now();
    const plans = [...cached];
    const names = new Set(cached.map((p) => p.metadata.name));
    for (const [key, entry] of this.created) {
      if (entry.plan.metadata.namespace !== namespace) continue;
      if (names.has(entry.plan.metadata.name) || now - entry.at > this.capMs) this.created.delete(key);
      else plans.push(entry.plan);
    }
    return plans.map((plan) => this.withResult(plan, now));
  }

  /** How many entries the overlay holds (created, handled): for tests and metrics. */
  size(): { created: number; handled: number } {
    return { created: this.created.size, handled: this.handled.size };
  }

  private withResult(plan: PostgresPolicyPlan, now: number): PostgresPolicyPlan {
    const key = planKey(plan.metadata.namespace, plan.metadata.name);
    const entry = this.handled.get(key);
    if (entry === undefined) return plan;
    if (!BEFORE_RESULT.has(plan.status?.phase) || now - entry.at > this.capMs) {
      this.handled.delete(key);
      return plan;
    }
    return { ...plan, status: { ...plan.status, ...entry.status } };
  }
}
