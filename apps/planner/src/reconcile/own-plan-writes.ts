// The planner's read-your-writes view of plans: the cache, with the plans this replica created and the
// execution results it handled on top until the cache shows them (libs/contracts own-writes.ts). Under a
// fleet's backlog the cache trails the API by tens of seconds or more; a pass deciding on the bare cache
// would miss a plan it just created (and create a second one) or read an applied plan as still pending
// (and supersede it: 254 plans in a 500-database bench run, 2026-11-27, when these writes still expired
// after 30 s). So nothing here expires on a clock while the cache trails: an entry goes when the cache
// has caught up with it, when the plan is deleted, or after `capMs`, a bound on memory for plans whose
// every event the stream compacted away.
import { OwnWrites } from '@rolepolicy/contracts';
import type { PostgresPolicyPlan, PostgresPolicyPlanStatus } from '@rolepolicy/plan-lifecycle';

/** Plan phases before a result: a cached plan in one of them trails a terminal result we handled. */
const BEFORE_RESULT: ReadonlySet<string | undefined> = new Set([
  undefined,
  'Pending',
  'Approved',
  'Applying',
]);

const planKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class OwnPlanWrites {
  /** Plans we created that the cache has not shown yet (any cached version of the plan shows it). */
  private readonly created: OwnWrites<PostgresPolicyPlan, PostgresPolicyPlan>;
  /**
   * Terminal statuses (Applied, Failed) of results we handled whose phase the cache does not show yet. The
   * executor wrote them, not us, so the cache shows one by content: a phase past execution.
   */
  private readonly handled: OwnWrites<PostgresPolicyPlanStatus, PostgresPolicyPlan>;
  /** Owner uid -> keys of the plans we created for it, so a pass reads only its own (pruned as they go). */
  private readonly createdBy = new Map<string, Set<string>>();

  constructor(capMs: number, now: () => number = Date.now, onExpired?: (store: string) => void) {
    this.created = new OwnWrites({
      store: 'planner-plan-create',
      expiryMs: capMs,
      now,
      onExpired,
      // Plans are created under a name of their own: any cached plan of that name is ours or newer.
      shows: () => true,
    });
    this.handled = new OwnWrites({
      store: 'planner-plan-result',
      expiryMs: capMs,
      now,
      onExpired,
      shows: (cached) => !BEFORE_RESULT.has(cached.status?.phase),
    });
  }

  /** A plan this replica created (through the gateway). */
  planCreated(plan: PostgresPolicyPlan): void {
    const key = planKey(plan.metadata.namespace, plan.metadata.name);
    this.created.record(key, plan, undefined);
    for (const { uid } of plan.metadata.ownerReferences ?? []) {
      let keys = this.createdBy.get(uid);
      if (keys === undefined) this.createdBy.set(uid, (keys = new Set()));
      keys.add(key);
    }
  }

  /** An execution result's terminal plan status (the executor writes it through the gateway). */
  resultHandled(namespace: string, name: string, status: PostgresPolicyPlanStatus): void {
    this.handled.record(planKey(namespace, name), status, undefined);
  }

  /** The cache reported the plan deleted: nothing of ours stands for it any more. */
  deleted(namespace: string, name: string): void {
    this.created.forget(planKey(namespace, name));
    this.handled.forget(planKey(namespace, name));
  }

  /**
   * The plans of some owners (a policy and its candidates, by uid) as the next decision must see them:
   * `cached` (theirs, in `namespace`) with our newer writes on top.
   */
  plans(
    namespace: string,
    cached: readonly PostgresPolicyPlan[],
    owners: readonly string[],
  ): PostgresPolicyPlan[] {
    const plans = [...cached];
    const byName = new Map(cached.map((p) => [p.metadata.name, p]));
    const prefix = `${namespace}/`;
    for (const owner of owners) {
      const keys = this.createdBy.get(owner);
      for (const key of keys ?? []) {
        if (!key.startsWith(prefix)) continue;
        const pending = this.created.pending(key, byName.get(key.slice(prefix.length)));
        if (pending === undefined) keys!.delete(key);
        else plans.push(pending.value);
      }
      if (keys?.size === 0) this.createdBy.delete(owner);
    }
    return plans.map((plan) => this.withResult(plan));
  }

  /** The plan as the next decision must see it: `cached` (or one we created) with our newer writes on top. */
  plan(
    namespace: string,
    name: string,
    cached: PostgresPolicyPlan | undefined,
  ): PostgresPolicyPlan | undefined {
    const plan = cached ?? this.created.pending(planKey(namespace, name), undefined)?.value;
    return plan === undefined ? undefined : this.withResult(plan);
  }

  /** How many entries are held (created, handled): for tests and metrics. */
  size(): { created: number; handled: number } {
    return { created: this.created.size, handled: this.handled.size };
  }

  private withResult(plan: PostgresPolicyPlan): PostgresPolicyPlan {
    const entry = this.handled.pending(planKey(plan.metadata.namespace, plan.metadata.name), plan);
    if (entry === undefined) return plan;
    return { ...plan, status: { ...plan.status, ...entry.value } };
  }
}
