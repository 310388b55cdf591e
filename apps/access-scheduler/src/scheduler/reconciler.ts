// The access-scheduler's loop: cache changes, timers and the periodic rebuild wake a request, an access
// policy or a target's finalizer sync (change-keys.ts). A request's pass gathers (request-gather.ts),
// decides (decideRequest, pure) and carries out (request-carry-out.ts: gateway commands through
// command-sink.ts, scoped requests through scoped-requests.ts); an access policy's pass is
// access-policy-pass.ts; executor results are recorded by result-handling.ts (after-result.ts decides).
// Reads see our own writes until the cache shows them (scheduler-writes.ts). The clock is injected.
import type { ResourceChange, ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { KeyedQueue, Slots } from '@rolepolicy/runtime';
import { revocationWaiting } from '../lifecycle/clock.js';
import { decideRequest } from '../lifecycle/request-machine.js';
import {
  ACCESS_POLICY_FINALIZER,
  accessPolicyPass,
  type AccessPolicyPassContext,
} from './access-policy-pass.js';
import {
  accessPolicyKey,
  rebuildWakes,
  requestKey,
  requestsOf,
  targetKey,
  wakesOf,
  type Wake,
} from './change-keys.js';
import { CommandSink } from './command-sink.js';
import { FingerprintCache } from './fingerprint.js';
import type { TimerJob } from './queues.js';
import { carryOutRequest, type RequestCarryOutDeps } from './request-carry-out.js';
import { gatherRequest, type RequestGatherDeps } from './request-gather.js';
import { handleResult, type ResultContext } from './result-handling.js';
import { CONCURRENT_PASSES, RETRY_PASS_MS, type SchedulerDeps } from './scheduler-deps.js';
import { SchedulerWrites } from './scheduler-writes.js';
import { ScopedRequests } from './scoped-requests.js';
import { sweepRequests } from './sweep.js';
import { TargetFinalizers } from './target-finalizer.js';
import { RequestTraces, inRequestSpan, noteRequestDecision } from './request-trace.js';

export { ACCESS_POLICY_FINALIZER, type SchedulerDeps };

/**
 * The reconcile loop of the access-scheduler: one replica is assumed (deploy/base runs one; unlike the planner,
 * ADR 0011, it has no leader election).
 */
export class AccessScheduler {
  private readonly queue: KeyedQueue;
  private readonly now: () => number;
  /** Our writes, read until the cache shows them. */
  private readonly writes: SchedulerWrites;
  private readonly sink: CommandSink;
  private readonly scoped: ScopedRequests;
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** The trace of each request's latest event, continued by its passes (request-trace.ts). */
  private readonly traces = new RequestTraces();
  /** What a request's pass reads (request-gather.ts) and where its writes go (request-carry-out.ts). */
  private readonly gather: RequestGatherDeps;
  private readonly carryOut: RequestCarryOutDeps;
  /** What an access policy's pass reads and does (access-policy-pass.ts). */
  private readonly accessPolicyContext: AccessPolicyPassContext;
  private readonly results: ResultContext;
  private readonly targets: TargetFinalizers;
  /** Passes that run at once (each may read Secrets and send commands); the rest wait their turn. */
  private readonly slots = new Slots(CONCURRENT_PASSES);
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {
    this.now = deps.now ?? Date.now;
    this.writes = new SchedulerWrites(this.now, deps.onOwnWriteExpired);
    this.sink = new CommandSink(deps.publisher);
    this.scoped = new ScopedRequests({
      cache: deps.cache,
      publisher: deps.publisher,
      log: deps.log,
      ...(deps.resendMs === undefined ? {} : { resendMs: deps.resendMs }),
      ...(deps.observeRevokeDispatch ? { observeRevokeDispatch: deps.observeRevokeDispatch } : {}),
    });
    const plan = (ns: string, name: string) =>
      this.writes.plan(ns, name, deps.cache.get('postgrespolicyplan', ns, name));
    const send = this.sink.send.bind(this.sink);
    const fingerprints = new FingerprintCache(
      deps.secrets,
      (ns, name) => deps.cache.get('secret', ns, name)?.metadata.resourceVersion ?? '',
    );
    this.gather = { cache: deps.cache, limits: deps.limits, plan, fingerprint: (t) => fingerprints.of(t) };
    this.carryOut = {
      sink: this.sink,
      scoped: this.scoped,
      writes: this.writes,
      plan,
      schedule: deps.schedule,
      audit: deps.audit,
      log: deps.log,
    };
    this.accessPolicyContext = {
      limits: deps.limits,
      now: this.now,
      policies: (ns) => deps.cache.list('postgrespolicy', ns),
      requestsOf: (ns, name, uid) => requestsOf(deps.cache, ns, name, uid),
      plan,
      send,
      statusWritten: (policy) =>
        this.writes.statusWritten(
          accessPolicyKey(policy.metadata.namespace, policy.metadata.name),
          policy.metadata.resourceVersion,
        ),
      lastDeletes: new Map(),
    };
    this.results = {
      cache: deps.cache,
      sink: this.sink,
      scoped: this.scoped,
      writes: this.writes,
      log: deps.log,
      ...(deps.observeRevocationLag ? { observeRevocationLag: deps.observeRevocationLag } : {}),
      triggerRequest: (ns, name) => this.triggerRequest(ns, name),
    };
    this.targets = new TargetFinalizers({ cache: deps.cache, plan, send, now: this.now });
    this.queue = new KeyedQueue((key, error) =>
      deps.log.error(`reconcile of ${key} failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /** Follows the cache and reconciles everything once. */
  start(): void {
    this.unsubscribe = this.deps.cache.onChange((change) => this.onChange(change));
    this.rebuild();
  }

  /** Stops timers and waits for running passes. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.retryTimers.values()) clearTimeout(t);
    await this.queue.idle();
  }

  /** Queues a pass of every request (whether decisions are authenticated changed, ADR 0026). */
  triggerRequests(): void {
    for (const o of this.deps.cache.list('ephemeralaccessrequest'))
      this.triggerRequest(o.metadata.namespace, o.metadata.name);
  }

  /** Resolves when no pass runs or waits (tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /**
   * Reconciles every access policy, request and guarded target (rebuildWakes), and asks the executor to
   * sweep every target an access policy names (ADR 0020): edges of bundle roles that no anchored request
   * holds are revoked, whatever happened to their request (finalizer removed by hand, activation plan
   * deleted, revoke plan forged). Returns the number of requests per phase.
   */
  rebuild(): Record<string, number> {
    const { wakes, phases } = rebuildWakes(this.deps.cache);
    for (const wake of wakes) this.wake(wake);
    const cache = this.deps.cache;
    this.scoped.sweep(
      sweepRequests(
        cache.list('ephemeralaccesspolicy'),
        (ns, name) => cache.get('postgrespolicy', ns, name),
        this.now(),
      ),
    );
    return phases;
  }

  /** A timer fired: reconcile its request now (resolves when the pass is done). */
  async onTimer(job: TimerJob): Promise<void> {
    if (this.stopped) return;
    await this.queue.schedule(requestKey(job.namespace, job.name), () =>
      this.slots.run(
        () => this.reconcileRequest(job.namespace, job.name),
        () => true,
      ),
    );
  }

  /** Queues a pass of the request; a revocation in waiting takes the next free slot (ADR 0013). */
  triggerRequest(ns: string, name: string): void {
    if (this.stopped) return;
    void this.queue.schedule(requestKey(ns, name), () =>
      this.slots.run(
        () => this.reconcileRequest(ns, name),
        () => revocationWaiting(this.deps.cache.get('ephemeralaccessrequest', ns, name), this.now()),
      ),
    );
  }

  /** Adds or removes the finalizer of a target policy (by uid) as the requests holding on it need. */
  triggerTarget(ns: string, uid: string): void {
    if (this.stopped || uid === '') return;
    void this.queue.schedule(targetKey(ns, uid), () => this.slots.run(() => this.targets.sync(ns, uid)));
  }

  triggerAccessPolicy(ns: string, name: string): void {
    if (this.stopped) return;
    void this.queue.schedule(accessPolicyKey(ns, name), () =>
      this.slots.run(() => this.reconcileAccessPolicy(ns, name)),
    );
  }

  /** Records an executor result (result-handling.ts), then runs the request's pass. */
  async handleResult(result: ScopedExecuteResultV1): Promise<void> {
    await handleResult(this.results, result, this.now());
  }

  private wake(wake: Wake): void {
    if (wake.kind === 'request') this.triggerRequest(wake.namespace, wake.name);
    else if (wake.kind === 'accessPolicy') this.triggerAccessPolicy(wake.namespace, wake.name);
    else this.triggerTarget(wake.namespace, wake.uid);
  }

  private onChange(change: ResourceChange): void {
    this.traces.noteChange(change, requestKey(change.namespace, change.name));
    for (const wake of wakesOf(change, this.deps.cache)) this.wake(wake);
  }

  private retryLater(ns: string, name: string): void {
    const key = requestKey(ns, name);
    if (this.retryTimers.has(key) || this.stopped) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(key);
      this.triggerRequest(ns, name);
    }, RETRY_PASS_MS);
    timer.unref();
    this.retryTimers.set(key, timer);
  }

  /** One request's pass, in the request's trace (request-trace.ts). */
  private reconcileRequest(ns: string, name: string): Promise<void> {
    const carrier = this.traces.get(requestKey(ns, name));
    return inRequestSpan(carrier, ns, name, () => this.requestPass(ns, name));
  }

  /** One request's pass: gather, decide (pure), carry out; then its retry and its target's finalizer. */
  private async requestPass(ns: string, name: string): Promise<void> {
    if (this.stopped) return;
    const cached = this.deps.cache.get('ephemeralaccessrequest', ns, name);
    if (cached === undefined) return;
    // Until the cache shows our last status write, a pass would decide on old state: it waits, unless an
    // executor result came since, and then decides on the status we wrote (scheduler-writes.ts).
    const view = this.writes.requestView(requestKey(ns, name), cached);
    if (view === null) return;
    const { request } = view;
    const now = this.now();
    const facts = await gatherRequest(this.gather, request);
    const unauthenticated = this.deps.decisionsUnauthenticated;
    const decision = decideRequest({
      ...facts,
      now,
      ...(unauthenticated ? { decisionsUnauthenticated: unauthenticated() } : {}),
    });
    noteRequestDecision(request.metadata.generation, decision);
    await carryOutRequest(this.carryOut, facts, decision, now, view.chained);
    if (decision.waiting) this.retryLater(ns, name);
    const resolved = request.status?.resolvedAccess;
    if (resolved != null) this.triggerTarget(ns, resolved.targetPolicyUid);
  }

  private async reconcileAccessPolicy(ns: string, name: string): Promise<void> {
    if (this.stopped) return;
    const object = this.deps.cache.get('ephemeralaccesspolicy', ns, name);
    if (object === undefined || this.writes.statusPending(accessPolicyKey(ns, name), object)) return;
    await accessPolicyPass(this.accessPolicyContext, object);
  }
}
