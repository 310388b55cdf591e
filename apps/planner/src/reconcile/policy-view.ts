// What the planner's next decision reads: the cache, with this replica's own writes on top until the cache
// shows them (a policy status it wrote, plans it created, results it handled; libs/contracts own-writes.ts),
// and the policy status write that records one. Deciding on the bare cache would undo a write still on its
// way (put old conditions back, create a plan twice, supersede a plan it just saw applied).
import { OwnWrites } from '@rolepolicy/contracts';
import type { AnnounceTimers } from '@rolepolicy/runtime';
import {
  cachedPlan,
  cachedPolicy,
  isConditionTrue,
  sameKeptStatus,
  settledReady,
  type PolicyWriteCause,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicyPlanStatus,
  type PostgresPolicyStatus,
} from '@rolepolicy/plan-lifecycle';
import { policyStatusCommand } from '../planning/gateway-commands.js';
import { policyStatusEvents } from '../planning/plan-events.js';
import type { CommandSink } from './command-sink.js';
import { policyKey } from './change-keys.js';
import { OwnPlanWrites } from './own-plan-writes.js';
import { EXECUTING_STATUS_AFTER_INTERIM_MS } from './pass-timing.js';
import { LIVE_PLAN_WAIT_MS, type PolicyState } from './policy-state.js';
import type { ReconcilerDeps } from './reconciler-deps.js';

/**
 * How long a write of ours (a policy status, a created plan, a handled result) may stay invisible in the
 * cache before we stop overlaying it. Not a guess at the cache's lag: held access goes as soon as the cache
 * shows the write, and this only bounds memory. This replica (while it leads) is the one writer of policy
 * status and of the plans it creates; deciding on a cache older than our own writes superseded applied plans
 * when this was 30 s.
 */
const OVERLAY_CAP_MS = LIVE_PLAN_WAIT_MS;

export interface PolicyViewDeps {
  readonly cache: ReconcilerDeps['cache'];
  readonly sink: Pick<CommandSink, 'send' | 'recordEvent'>;
  /** The reconciler's per-policy state (its settled Ready condition), undefined for a policy it forgot. */
  readonly state: (key: string) => PolicyState | undefined;
  readonly now: () => number;
  readonly onOwnWriteExpired?: ((store: string) => void) | undefined;
  /** Timers of held statuses (tests decide when the delay has passed). */
  readonly timers?: AnnounceTimers;
}

/** A status recorded as written but not sent yet ({@link PolicyView.holdStatus}). */
interface HeldStatus {
  /** The policy as it was before the held status (the command's base when it is sent). */
  readonly base: PostgresPolicy;
  readonly status: PostgresPolicyStatus;
  handle: unknown;
  /** Set once the delay passed: the send under way. */
  sending: Promise<void> | undefined;
}

/**
 * Whether the policy's status says its generation is being reconciled: `Reconciling=True`, which only the
 * interim statuses carry (the announcement of a new generation, `Ready=Unknown/Applying`), for the generation
 * the policy has now. An outcome removes the condition.
 */
function showsInterim(policy: PostgresPolicy): boolean {
  const status = policy.status;
  return (
    status?.last_attempted_generation === policy.metadata.generation &&
    isConditionTrue(status.conditions, 'Reconciling')
  );
}

const REAL_TIMERS: AnnounceTimers = {
  set: (fire, ms) => setTimeout(fire, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The planner's read-your-own-writes view of policies and plans, and its policy status writes. */
export class PolicyView {
  /** Plans we created and results we handled, on top of the cache until it shows them (own-plan-writes.ts). */
  private readonly planWrites: OwnPlanWrites;
  /**
   * Per policy key: the status we last wrote, until the cache shows it. The gateway applies a policy status
   * unconditionally, so the cache shows it by content (the same status), not by a newer version.
   */
  private readonly statusWrites: OwnWrites<PostgresPolicyStatus, PostgresPolicy>;
  /** Per policy key: a status held back while its outcome may follow at once (holdStatus). */
  private readonly held = new Map<string, HeldStatus>();

  constructor(private readonly deps: PolicyViewDeps) {
    this.planWrites = new OwnPlanWrites(OVERLAY_CAP_MS, deps.now, deps.onOwnWriteExpired);
    this.statusWrites = new OwnWrites({
      store: 'planner-policy-status',
      expiryMs: OVERLAY_CAP_MS,
      now: deps.now,
      onExpired: deps.onOwnWriteExpired,
      // Both sides are kept objects (the cache's converted policy, our recorded write): compared by a text
      // computed once per object, as this runs on every read of the policy while the write is pending.
      shows: (cached, write) => sameKeptStatus(cached.status, write.value),
    });
  }

  /** The policy as the next decision must see it: the cache, with our own newer status write on top. */
  currentPolicy(namespace: string, name: string): PostgresPolicy | null {
    const object = this.deps.cache.get('postgrespolicy', namespace, name);
    if (object === undefined) return null;
    const policy = cachedPolicy(object);
    if (policy === null) return null;
    const written = this.statusWrites.pending(policyKey(namespace, name), policy);
    return written === undefined ? policy : { ...policy, status: written.value };
  }

  /**
   * The plans a pass of the policy decides on, its own and its candidates': the cache (by owner, so a pass
   * does not grow with the namespace), with the plans we created and the results we handled on top.
   */
  plansOf(policy: PostgresPolicy): PostgresPolicyPlan[] {
    const { namespace, name, uid } = policy.metadata;
    const candidates = this.deps.cache
      .list('postgrespolicycandidate', namespace)
      .filter((c) => (c.spec as { policyRef?: { name?: string } } | undefined)?.policyRef?.name === name)
      .map((c) => c.metadata.uid)
      .filter((u): u is string => typeof u === 'string');
    const owners = [uid, ...candidates];
    const cached = owners
      .flatMap((owner) => this.deps.cache.owned('postgrespolicyplan', owner))
      .filter((o) => o.metadata.namespace === namespace)
      .map((o) => cachedPlan(o))
      .filter((p): p is PostgresPolicyPlan => p !== null);
    return this.planWrites.plans(namespace, [...new Set(cached)], owners);
  }

  /** One plan as the next decision must see it (the cache or a plan we created, our result on top). */
  currentPlan(namespace: string, name: string): PostgresPolicyPlan | null {
    const object = this.deps.cache.get('postgrespolicyplan', namespace, name);
    const cached = object === undefined ? undefined : (cachedPlan(object) ?? undefined);
    return this.planWrites.plan(namespace, name, cached) ?? null;
  }

  /** Whether a plan of the namespace has the name (in the cache, or created by us and not shown yet). */
  planNameTaken(namespace: string, name: string): boolean {
    return this.currentPlan(namespace, name) !== null;
  }

  /**
   * Sends a policy status (on top of the freshest view of the policy), reads it back until the cache shows
   * it, and records the Events its Ready transition calls for (`cause`: policy-events.ts).
   */
  async writeStatus(
    policy: PostgresPolicy,
    status: PostgresPolicyStatus,
    cause: PolicyWriteCause = 'pass',
  ): Promise<void> {
    const { namespace, name } = policy.metadata;
    const held = await this.release(policyKey(namespace, name));
    const base = this.currentPolicy(namespace, name) ?? policy;
    // A held status never sent: the patch turns the API's copy (the held one's base) into this one.
    const patchBase = held === undefined ? base : { ...base, status: held.base.status };
    await this.deps.sink.send(policyStatusCommand(patchBase, status));
    await this.recorded(base, status, cause);
  }

  /**
   * Records `status` as written (the next decision and the result handler read it, and its Events are sent
   * now) but sends it only when no other status of the policy follows within `afterMs`: an execution that
   * commits within a second is shown by its outcome alone, a longer one shows `Ready=Unknown/Applying` from
   * then on, as `announceIfSlow` does for `Reconciling` (issue 28: one API write less per apply). When the
   * API's copy already shows an interim status of this generation (`Reconciling=True`: the pass announced
   * it), the held status waits {@link EXECUTING_STATUS_AFTER_INTERIM_MS} instead: one interim status per pass.
   */
  async holdStatus(policy: PostgresPolicy, status: PostgresPolicyStatus, afterMs: number): Promise<void> {
    const { namespace, name } = policy.metadata;
    const key = policyKey(namespace, name);
    const earlier = await this.release(key);
    const current = this.currentPolicy(namespace, name) ?? policy;
    // What the API has (or will have: our writes sent), never a held status.
    const base = earlier === undefined ? current : { ...current, status: earlier.base.status };
    const delay = showsInterim(base) ? Math.max(afterMs, EXECUTING_STATUS_AFTER_INTERIM_MS) : afterMs;
    const entry: HeldStatus = { base, status, handle: undefined, sending: undefined };
    const timers = this.deps.timers ?? REAL_TIMERS;
    entry.handle = timers.set(() => {
      // Best effort, like the write it stands for being late: the outcome's write follows in any case.
      entry.sending = this.deps.sink.send(policyStatusCommand(base, status)).then(
        () => undefined,
        () => undefined,
      );
    }, delay);
    this.held.set(key, entry);
    await this.recorded(current, status, 'pass');
  }

  /** Ends the hold on a policy's status: cancelled if not sent yet (returned), else awaited. */
  private async release(key: string): Promise<HeldStatus | undefined> {
    const entry = this.held.get(key);
    if (entry === undefined) return undefined;
    this.held.delete(key);
    (this.deps.timers ?? REAL_TIMERS).clear(entry.handle);
    if (entry.sending === undefined) return entry;
    await entry.sending;
    return undefined;
  }

  /** Our status as the next decision reads it until the cache shows it, and the Events of its transition. */
  private async recorded(
    base: PostgresPolicy,
    status: PostgresPolicyStatus,
    cause: PolicyWriteCause,
  ): Promise<void> {
    const { namespace, name } = base.metadata;
    const state = this.deps.state(policyKey(namespace, name));
    const settled = settledReady(base.status, state?.settled);
    if (state !== undefined) {
      this.statusWrites.record(policyKey(namespace, name), status, base.metadata.resourceVersion);
      state.settled = settledReady(status, settled);
    }
    for (const policyEvent of policyStatusEvents(base, status, settled, cause))
      await this.deps.sink.recordEvent(policyEvent, base);
  }

  /** A plan this replica created (through the gateway). */
  planCreated(plan: PostgresPolicyPlan): void {
    this.planWrites.planCreated(plan);
  }

  /** A result this replica handled, read as the plan's status until the cache shows it. */
  resultHandled(namespace: string, name: string, status: PostgresPolicyPlanStatus): void {
    this.planWrites.resultHandled(namespace, name, status);
  }

  /** The plan is gone from the cache: nothing of ours to read on top of it. */
  planDeleted(namespace: string, name: string): void {
    this.planWrites.deleted(namespace, name);
  }

  /** The policy is gone: its status write too. */
  forget(key: string): void {
    this.statusWrites.forget(key);
    this.drop(key);
  }

  /** Held statuses not sent yet are dropped (the replica stops leading: the next leader plans afresh). */
  dropHeld(): void {
    for (const key of [...this.held.keys()]) this.drop(key);
  }

  private drop(key: string): void {
    const entry = this.held.get(key);
    if (entry !== undefined) (this.deps.timers ?? REAL_TIMERS).clear(entry.handle);
    this.held.delete(key);
  }
}
