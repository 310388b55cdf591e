// The access-scheduler's read-your-own-writes (libs/contracts own-writes.ts): its status writes on requests
// and access policies, the scoped plans it created or re-armed, and the plan statuses it wrote from
// executor results, each read until the cache shows it. A pass deciding on the bare cache meanwhile would
// write a status twice from old state, create a plan twice, or read a plan as still Applying after its
// result was recorded.
import { OwnWrites, type Cached, type Versioned } from '@rolepolicy/contracts';

type PostgresPolicyPlan = Cached<'postgrespolicyplan'>;

/** How long a write of ours may stay invisible in the cache before a pass reads past it (the fallback). */
export const OWN_WRITE_EXPIRY_MS = 30_000;

const planKey = (ns: string, name: string): string => `${ns}/${name}`;

/** The scheduler's pending writes, by the keys of the objects written. */
export class SchedulerWrites {
  /** Our status writes on requests and access policies the cache has not shown yet (a newer version). */
  private readonly status: OwnWrites<true>;
  /** Plans we created or re-armed, not shown by the cache yet. */
  private readonly planCreates: OwnWrites<true, PostgresPolicyPlan>;
  /**
   * Plan statuses we wrote from results, until the cache shows them. Written without a version condition,
   * so the cache shows one by content: the phase we wrote.
   */
  private readonly planStatus: OwnWrites<Record<string, unknown>, PostgresPolicyPlan>;

  constructor(now: () => number, onExpired?: (store: string) => void) {
    const own = { expiryMs: OWN_WRITE_EXPIRY_MS, now, ...(onExpired ? { onExpired } : {}) };
    this.status = new OwnWrites({ store: 'access-scheduler-status', ...own });
    this.planCreates = new OwnWrites({ store: 'access-scheduler-plan-create', ...own });
    this.planStatus = new OwnWrites({
      store: 'access-scheduler-plan-status',
      ...own,
      shows: (cached, write) => cached.status?.phase === write.value['phase'],
    });
  }

  /** A status write on the object under `key`, conditional on version `basedOn`. */
  statusWritten(key: string, basedOn: string | undefined): void {
    this.status.record(key, true, basedOn);
  }

  /** True while our last status write on the object is not visible yet (a pass would decide on old state). */
  statusPending(key: string, cached: Versioned): boolean {
    return this.status.pending(key, cached) !== undefined;
  }

  /** An executor result came for the request: its next pass reads the cache as it is. */
  forgetStatus(key: string): void {
    this.status.forget(key);
  }

  /** A scoped plan created (or re-armed) over version `basedOn` of the plan (undefined: a new one). */
  planCreated(ns: string, name: string, basedOn: string | undefined): void {
    this.planCreates.record(planKey(ns, name), true, basedOn);
    this.planStatus.forget(planKey(ns, name));
  }

  /** True while our create of the plan is not visible in `cached` (the plan as the cache has it). */
  planCreatePending(ns: string, name: string, cached: PostgresPolicyPlan | undefined): boolean {
    return this.planCreates.pending(planKey(ns, name), cached) !== undefined;
  }

  /** A plan status written from a result (shown by its phase, whatever version it was based on). */
  planStatusWritten(ns: string, name: string, patch: Record<string, unknown>): void {
    this.planStatus.record(planKey(ns, name), patch, undefined);
  }

  /** A plan as the cache has it, with a status we wrote from a result on top until the cache shows it. */
  plan(ns: string, name: string, cached: PostgresPolicyPlan | undefined): PostgresPolicyPlan | undefined {
    if (cached === undefined) return cached;
    const written = this.planStatus.pending(planKey(ns, name), cached);
    if (written === undefined) return cached;
    return {
      ...cached,
      // The write is a merge patch (null clears a field, e.g. lastError), not a typed status: the lifecycle
      // reads a null field as an absent one.
      status: { ...(cached.status ?? {}), ...written.value } as PostgresPolicyPlan['status'],
    };
  }
}
