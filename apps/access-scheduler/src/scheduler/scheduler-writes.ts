// The access-scheduler's read-your-own-writes (libs/contracts own-writes.ts): its status writes on requests
// and access policies, the scoped plans it created or re-armed, and the plan statuses it wrote from
// executor results, each read until the cache shows it. A pass deciding on the bare cache meanwhile would
// write a status twice from old state, create a plan twice, or read a plan as still Applying after its
// result was recorded.
import { OwnWrites, type Cached, type Versioned } from '@rolepolicy/contracts';

type PostgresPolicyPlan = Cached<'postgrespolicyplan'>;
type RequestStatus = NonNullable<Cached<'ephemeralaccessrequest'>['status']>;

/** A status write of ours: the status it set (requests), or nothing (access policies only wait for it). */
type StatusWrite = { readonly status: RequestStatus | undefined };

/**
 * What a request's pass decides on: the cached request, or, once an executor result arrived after our
 * status write the cache does not show yet, the request with that status (`chained`: a write decided on it
 * follows ours in the gateway's order, so it cannot be bound to a resourceVersion we have not seen).
 */
export type RequestView<R> = { readonly request: R; readonly chained: boolean };

/** A cached object with a status of any shape (requests and access policies). */
type WithStatus = Versioned & { readonly status?: object | null | undefined };

/** The status's phase, if it has one. */
function phaseOf(status: object | null | undefined): unknown {
  return status != null && 'phase' in status ? status.phase : undefined;
}

/** How long a write of ours may stay invisible in the cache before a pass reads past it (the fallback). */
export const OWN_WRITE_EXPIRY_MS = 30_000;

const planKey = (ns: string, name: string): string => `${ns}/${name}`;

/** The scheduler's pending writes, by the keys of the objects written. */
export class SchedulerWrites {
  /** Our status writes on requests and access policies the cache has not shown yet (a newer version). */
  private readonly status: OwnWrites<StatusWrite>;
  /**
   * Request status writes decided on our own pending write (after a result): sent without a version, so
   * the cache shows one by content (its phase), not by a newer version (our first write makes one).
   */
  private readonly chained: OwnWrites<RequestStatus, WithStatus>;
  /** Requests whose executor result arrived after our pending status write: their pass decides on it. */
  private readonly resultsSince = new Set<string>();
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
    this.chained = new OwnWrites({
      store: 'access-scheduler-status',
      ...own,
      shows: (cached, write) => phaseOf(cached.status) === write.value.phase,
    });
    this.planCreates = new OwnWrites({ store: 'access-scheduler-plan-create', ...own });
    this.planStatus = new OwnWrites({
      store: 'access-scheduler-plan-status',
      ...own,
      shows: (cached, write) => cached.status?.phase === write.value['phase'],
    });
  }

  /** A status write on the object under `key`, conditional on version `basedOn`; `status` what it set. */
  statusWritten(key: string, basedOn: string | undefined, status?: RequestStatus): void {
    this.chained.forget(key);
    this.resultsSince.delete(key);
    this.status.record(key, { status }, basedOn);
  }

  /** A request status write decided on our own pending one ({@link RequestView.chained}), without a version. */
  chainedStatusWritten(key: string, status: RequestStatus): void {
    this.status.forget(key);
    this.resultsSince.delete(key);
    this.chained.record(key, status, undefined);
  }

  /** True while our last status write on the object is not visible yet (a pass would decide on old state). */
  statusPending(key: string, cached: WithStatus): boolean {
    return this.status.pending(key, cached) !== undefined || this.chained.pending(key, cached) !== undefined;
  }

  /**
   * An executor result came for the request: its next pass decides on our pending status write instead of
   * waiting for the cache to show it (the result is news the cache cannot hold yet; deciding on the cached,
   * older status would repeat our write, and waiting put a whole gateway backlog between a revocation and
   * `Ended`).
   */
  resultArrived(key: string): void {
    this.resultsSince.add(key);
  }

  /** What the request's pass decides on (see {@link RequestView}), or null: wait for the cache. */
  requestView<R extends Versioned & { readonly status?: RequestStatus | null | undefined }>(
    key: string,
    cached: R,
  ): RequestView<R> | null {
    const chained = this.chained.pending(key, cached);
    const direct = chained === undefined ? this.status.pending(key, cached) : undefined;
    const written = chained?.value ?? direct?.value.status;
    if (chained === undefined && direct === undefined) {
      this.resultsSince.delete(key);
      return { request: cached, chained: false };
    }
    if (!this.resultsSince.has(key) || written === undefined) return null;
    return { request: { ...cached, status: written }, chained: true };
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
