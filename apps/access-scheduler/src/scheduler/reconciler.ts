// The access-scheduler's loop: cache changes, timers and the periodic rebuild wake a request or an access
// policy; each pass reads the cache (and the target fingerprint through the gateway), calls the pure
// decisions, and sends their writes as ordered gateway commands and scoped execution requests.
import { randomUUID } from 'node:crypto';
import {
  k8sCommandContract,
  k8sCommandSubject,
  scopedExecuteRequestContract,
  scopedRequestSubject,
  scopedRevokeRequestContract,
  OwnWrites,
  type AnyCached,
  type Cached,
  type CachedMeta,
  type JetStreamPublisher,
  type K8sCommandV1,
  type ResourceCache,
  type ResourceChange,
  type ScopedExecuteRequestV1,
  type ScopedExecuteResultV1,
} from '@rolepolicy/contracts';
import { API_VERSION } from '@rolepolicy/kube';
import { EPHEMERAL_REQUEST_ORIGIN, type ScopeOperation } from '@rolepolicy/policy';
import { KeyedQueue } from '@rolepolicy/runtime';
import type { SecretReader } from '@rolepolicy/contracts';
import { validateAccessPolicy, type ClusterLimits } from '../lifecycle/access-policy.js';
import { auditRecord, transitionEvent, type AuditRecord } from '../lifecycle/audit.js';
import { revocationDueAt } from '../lifecycle/clock.js';
import { decideRequest, REQUEST_FINALIZER, type RequestAction } from '../lifecycle/request-machine.js';
import { resolveRequest, type FingerprintRead } from '../lifecycle/resolution.js';
import { errorText, planNameOf, planStatusOfResult, scopedPlanObject } from '../lifecycle/scoped-plan.js';
import { targetView, type TargetView } from '../lifecycle/target.js';
import { TARGET_FINALIZER } from '../lifecycle/target-guard.js';
import { timestamp } from '../lifecycle/time.js';
import {
  createPlanCommand,
  deleteCommand,
  refOf,
  finalizerCommand,
  replacingPatch,
  statusCommand,
  type Ref,
  type UnkeyedCommand,
} from './commands.js';
import { FingerprintCache } from './fingerprint.js';
import { sweepRequests } from './sweep.js';
import { TargetFinalizers } from './target-finalizer.js';
import { Slots } from '@rolepolicy/runtime';
import type { TimerJob } from './queues.js';
import {
  ACCESS_POLICY_FINALIZER,
  accessPolicyPass,
  type AccessPolicyPassContext,
} from './access-policy-pass.js';

export { ACCESS_POLICY_FINALIZER };

/** What the loop needs. */
export interface SchedulerDeps {
  readonly cache: Pick<ResourceCache, 'get' | 'list' | 'onChange'>;
  readonly publisher: Pick<JetStreamPublisher, 'publish'>;
  readonly secrets: SecretReader;
  readonly limits: ClusterLimits;
  /** Timer port (BullMQ in production). */
  readonly schedule: (job: TimerJob, now: number) => Promise<void>;
  readonly log: { log(m: string): void; warn(m: string): void; error(m: string): void };
  readonly audit: (record: AuditRecord) => void;
  readonly observeRevocationLag?: (seconds: number) => void;
  /** Time from expiresAt to the scheduler publishing the revoke (its own share of the revocation lag). */
  readonly observeRevokeDispatch?: (seconds: number) => void;
  /** How long a scoped request waits for its result before it is sent again (default 120 s). */
  readonly resendMs?: number;
  readonly now?: () => number;
  /** Whether no admission policy authenticates decisions (ADR 0026); absent: not reported. */
  readonly decisionsUnauthenticated?: () => boolean;
  /** Called with the store's name when an own write is dropped unseen (`rp_own_writes_expired_total`). */
  readonly onOwnWriteExpired?: (store: string) => void;
}

/** How long a write of ours may stay invisible in the cache before a pass reads past it (own-writes fallback). */
const OWN_WRITE_EXPIRY_MS = 30_000;
/** A pass that waits on something (a plan to appear, a report) looks again after this long. */
const RETRY_PASS_MS = 15_000;
/** A scoped request without a report is sent again after this long (the executor's ack wait). */
const RESEND_MS = 120_000;
/** A Blocked scoped request is asked again after this long. */
const BLOCKED_RETRY_MS = 30_000;

type EphemeralAccessRequest = Cached<'ephemeralaccessrequest'>;
type PostgresPolicy = Cached<'postgrespolicy'>;
type PostgresPolicyPlan = Cached<'postgrespolicyplan'>;
const meta = (o: AnyCached): CachedMeta => o.metadata;
const reqKey = (ns: string, name: string) => `request/${ns}/${name}`;
const eapKey = (ns: string, name: string) => `accesspolicy/${ns}/${name}`;
const targetKey = (ns: string, uid: string) => `target/${ns}/${uid}`;

/**
 * The reconcile loop of the access-scheduler: one replica is assumed (deploy/base runs one; unlike the planner,
 * ADR 0011, it has no leader election).
 */
export class AccessScheduler {
  private readonly queue: KeyedQueue;
  private readonly session = randomUUID().slice(0, 8);
  private sequence = 0;
  /** Our status writes on requests and access policies the cache has not shown yet (a newer version). */
  private readonly statusWrites: OwnWrites<true>;
  /** Plans we created or re-armed, not shown by the cache yet. */
  private readonly planCreates: OwnWrites<true, PostgresPolicyPlan>;
  /**
   * Plan statuses we wrote from results, until the cache shows them. Written without a version condition,
   * so the cache shows one by content: the phase we wrote.
   */
  private readonly planStatusWrites: OwnWrites<Record<string, unknown>, PostgresPolicyPlan>;
  /** Last time a scoped request for a plan was sent. */
  private readonly lastSent = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** What an access policy's pass reads and does (access-policy-pass.ts). */
  private readonly accessPolicyContext: AccessPolicyPassContext;
  private readonly targets: TargetFinalizers;
  private readonly fingerprints: FingerprintCache;
  /** Passes that run at once (each may read Secrets and send commands); the rest wait their turn. */
  private readonly slots = new Slots(16);
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {
    const own = {
      expiryMs: OWN_WRITE_EXPIRY_MS,
      now: () => this.now(),
      ...(deps.onOwnWriteExpired ? { onExpired: deps.onOwnWriteExpired } : {}),
    };
    this.statusWrites = new OwnWrites({ store: 'access-scheduler-status', ...own });
    this.accessPolicyContext = {
      limits: deps.limits,
      now: () => this.now(),
      policies: (ns) => deps.cache.list('postgrespolicy', ns),
      requestsOf: (ns, name, uid) => this.requestsOf(ns, name, uid),
      plan: (ns, name) => this.plan(ns, name),
      send: (command, owner) => this.send(command, owner),
      statusWritten: (policy) =>
        this.statusWrites.record(
          eapKey(policy.metadata.namespace, policy.metadata.name),
          true,
          policy.metadata.resourceVersion,
        ),
      lastDeletes: new Map(),
    };
    this.planCreates = new OwnWrites({ store: 'access-scheduler-plan-create', ...own });
    this.planStatusWrites = new OwnWrites({
      store: 'access-scheduler-plan-status',
      ...own,
      shows: (cached, write) => cached.status?.phase === write.value['phase'],
    });
    this.fingerprints = new FingerprintCache(
      deps.secrets,
      (ns, name) => deps.cache.get('secret', ns, name)?.metadata.resourceVersion ?? '',
    );
    this.targets = new TargetFinalizers({
      cache: deps.cache,
      plan: (ns, name) => this.plan(ns, name),
      send: (command, owner) => this.send(command, owner),
      now: () => this.now(),
    });
    this.queue = new KeyedQueue((key, error) =>
      deps.log.error(`reconcile of ${key} failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
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
      this.triggerRequest(o.metadata.namespace ?? '', o.metadata.name);
  }

  /** Resolves when no pass runs or waits (tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /**
   * Reconciles every access policy and request: each request pass re-adds its timer (Redis holds no truth)
   * and acts on any deadline already past. Returns the number of requests per phase.
   */
  rebuild(): Record<string, number> {
    const phases: Record<string, number> = {};
    for (const o of this.deps.cache.list('ephemeralaccesspolicy'))
      this.triggerAccessPolicy(o.metadata.namespace ?? '', o.metadata.name);
    for (const o of this.deps.cache.list('ephemeralaccessrequest')) {
      const phase = o.status?.phase ?? 'Pending';
      phases[phase] = (phases[phase] ?? 0) + 1;
      this.triggerRequest(o.metadata.namespace ?? '', o.metadata.name);
    }
    // A guarded target that no request holds any more (its requests gone) is released here.
    for (const o of this.deps.cache.list('postgrespolicy')) {
      if ((meta(o).finalizers ?? []).includes(TARGET_FINALIZER))
        this.triggerTarget(o.metadata.namespace ?? '', meta(o).uid ?? '');
    }
    this.sweep();
    return phases;
  }

  /**
   * Asks the executor to sweep every target an access policy names (ADR 0020): edges of bundle roles that no
   * anchored request holds are revoked, whatever happened to their request (finalizer removed by hand,
   * activation plan deleted, revoke plan forged). On the revocation subject, which only this service sends.
   */
  private sweep(): void {
    const requests = sweepRequests(
      this.deps.cache.list('ephemeralaccesspolicy'),
      (ns, name) => this.deps.cache.get('postgrespolicy', ns, name),
      this.now(),
    );
    for (const message of requests) {
      this.deps.publisher
        .publish(scopedRevokeRequestContract, scopedRequestSubject('Sweep'), message, message.idempotencyKey)
        .catch((error: unknown) =>
          this.deps.log.warn(
            `sweep of ${message.policy.namespace}/${message.policy.name} not sent: ${errorText(String(error))}`,
          ),
        );
    }
  }

  /** A timer fired: reconcile its request now (resolves when the pass is done). */
  async onTimer(job: TimerJob): Promise<void> {
    if (this.stopped) return;
    await this.queue.schedule(reqKey(job.namespace, job.name), () =>
      this.slots.run(
        () => this.reconcileRequest(job.namespace, job.name),
        () => true,
      ),
    );
  }

  triggerRequest(ns: string, name: string): void {
    if (this.stopped) return;
    void this.queue.schedule(reqKey(ns, name), () =>
      this.slots.run(
        () => this.reconcileRequest(ns, name),
        () => this.due(ns, name),
      ),
    );
  }

  /**
   * True for a request whose pass is a revocation in waiting: past its expiry while holding access, Revoking,
   * or deleted while holding. Such a pass takes the next free slot ahead of the others (ADR 0013).
   */
  private due(ns: string, name: string): boolean {
    const request = this.deps.cache.get('ephemeralaccessrequest', ns, name);
    const phase = request?.status?.phase;
    if (phase !== 'Applying' && phase !== 'Active' && phase !== 'Revoking') return false;
    if (phase === 'Revoking' || request!.metadata.deletionTimestamp !== undefined) return true;
    const dueAt = revocationDueAt(request!);
    return dueAt !== undefined && this.now() >= dueAt;
  }

  /** Adds or removes the finalizer of a target policy (by uid) as the requests holding on it need. */
  triggerTarget(ns: string, uid: string): void {
    if (this.stopped || uid === '') return;
    void this.queue.schedule(targetKey(ns, uid), () => this.slots.run(() => this.targets.sync(ns, uid)));
  }

  triggerAccessPolicy(ns: string, name: string): void {
    if (this.stopped) return;
    void this.queue.schedule(eapKey(ns, name), () =>
      this.slots.run(() => this.reconcileAccessPolicy(ns, name)),
    );
  }

  private retryLater(ns: string, name: string): void {
    const key = reqKey(ns, name);
    if (this.retryTimers.has(key) || this.stopped) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(key);
      this.triggerRequest(ns, name);
    }, RETRY_PASS_MS);
    timer.unref();
    this.retryTimers.set(key, timer);
  }

  private onChange(change: ResourceChange): void {
    const ns = change.namespace;
    switch (change.kind) {
      case 'ephemeralaccessrequest': {
        this.triggerRequest(ns, change.name);
        const policy = change.object?.spec?.accessPolicyRef?.name;
        if (policy !== undefined) this.triggerAccessPolicy(ns, policy);
        else
          for (const o of this.deps.cache.list('ephemeralaccesspolicy', ns))
            this.triggerAccessPolicy(ns, o.metadata.name);
        return;
      }
      case 'ephemeralaccesspolicy':
        this.triggerAccessPolicy(ns, change.name);
        for (const r of this.requestsOf(ns, change.name, change.object?.metadata.uid)) {
          this.triggerRequest(ns, r.metadata.name ?? '');
        }
        return;
      case 'postgrespolicy':
        if (change.object !== undefined) this.triggerTarget(ns, meta(change.object).uid ?? '');
        for (const o of this.deps.cache.list('ephemeralaccesspolicy', ns)) {
          if (o.spec.postgresPolicyRef.name !== change.name) continue;
          this.triggerAccessPolicy(ns, o.metadata.name);
          // Only a request still being resolved or activated reads its target; an Active or Revoking one
          // does not (the planner writes the target's status after every overlay change: no fan-out then).
          for (const r of this.requestsOf(ns, o.metadata.name, meta(o).uid)) {
            const phase = r.status?.phase ?? 'Pending';
            if (phase === 'Pending' || phase === 'PendingApproval' || phase === 'Applying')
              this.triggerRequest(ns, r.metadata.name ?? '');
          }
        }
        return;
      case 'postgrespolicyplan': {
        const origin = change.object?.spec?.origin;
        if (origin?.kind === EPHEMERAL_REQUEST_ORIGIN) this.triggerRequest(ns, origin.name);
        else if (change.type === 'delete')
          for (const r of this.deps.cache.list('ephemeralaccessrequest', ns))
            this.triggerRequest(ns, r.metadata.name);
        return;
      }
      default:
        return;
    }
  }

  /** Requests that name the access policy, or resolved to its uid. */
  private requestsOf(ns: string, name: string, uid: string | undefined): EphemeralAccessRequest[] {
    return this.deps.cache
      .list('ephemeralaccessrequest', ns)
      .filter(
        (r) =>
          r.spec.accessPolicyRef.name === name ||
          (uid !== undefined && r.status?.resolvedAccess?.accessPolicyUid === uid),
      );
  }

  /** A plan as the cache has it, with a status we wrote from a result on top until the cache shows it. */
  private plan(ns: string, name: string): PostgresPolicyPlan | undefined {
    const cached = this.deps.cache.get('postgrespolicyplan', ns, name);
    if (cached === undefined) return cached;
    const written = this.planStatusWrites.pending(`${ns}/${name}`, cached);
    if (written === undefined) return cached;
    return {
      ...cached,
      status: { ...(cached.status ?? {}), ...written.value } as PostgresPolicyPlan['status'],
    };
  }

  /** True while our last write to the object is not visible yet (the pass would decide on old state). */
  private awaitingOwnWrite(key: string, object: AnyCached): boolean {
    return this.statusWrites.pending(key, { metadata: meta(object) }) !== undefined;
  }

  private fingerprint(target: PostgresPolicy): Promise<FingerprintRead> {
    return this.fingerprints.of(target);
  }

  private async reconcileRequest(ns: string, name: string): Promise<void> {
    if (this.stopped) return;
    const object = this.deps.cache.get('ephemeralaccessrequest', ns, name);
    if (object === undefined) return;
    const key = reqKey(ns, name);
    if (this.awaitingOwnWrite(key, object)) return;
    const request = object;
    const now = this.now();
    const accessPolicy =
      this.deps.cache.get('ephemeralaccesspolicy', ns, request.spec.accessPolicyRef.name) ?? null;
    const policies = this.deps.cache.list('postgrespolicy', ns);
    const resolved = request.status?.resolvedAccess ?? null;
    const phase = request.status?.phase ?? 'Pending';
    // A target being deleted takes no new access; one resolved before keeps it until revoked (snapshotTarget).
    const currentTarget =
      accessPolicy === null
        ? undefined
        : policies.find(
            (p) =>
              p.metadata.name === accessPolicy.spec.postgresPolicyRef.name &&
              p.metadata.deletionTimestamp === undefined,
          );
    const snapshotTarget =
      resolved === null ? currentTarget : policies.find((p) => p.metadata.uid === resolved.targetPolicyUid);
    const currentView = currentTarget === undefined ? null : targetView(currentTarget);
    const snapshotView = snapshotTarget === undefined ? null : targetView(snapshotTarget);
    let resolution = null;
    const deleting = request.metadata.deletionTimestamp !== undefined;
    if (!deleting && (phase === 'Pending' || phase === 'PendingApproval' || phase === 'Applying')) {
      let fingerprint: FingerprintRead | undefined;
      const acceptable =
        accessPolicy !== null &&
        currentTarget !== undefined &&
        validateAccessPolicy(accessPolicy, currentView, this.deps.limits).ok &&
        accessPolicy.spec.suspend !== true &&
        currentView?.suspended !== true;
      if (acceptable) fingerprint = await this.fingerprint(currentTarget!);
      resolution = resolveRequest({
        request,
        accessPolicy,
        target: currentView,
        limits: this.deps.limits,
        fingerprint,
      });
    }
    const activationName = resolved === null ? undefined : planNameOf(request, 'Activate');
    const revokeName = resolved === null ? undefined : planNameOf(request, 'Revoke');
    const activationPlan = activationName === undefined ? undefined : this.plan(ns, activationName);
    const revokePlan = revokeName === undefined ? undefined : this.plan(ns, revokeName);
    const decision = decideRequest({
      request,
      resolution,
      target: snapshotView,
      activationPlan,
      revokePlan,
      now,
      ...(this.deps.decisionsUnauthenticated
        ? { decisionsUnauthenticated: this.deps.decisionsUnauthenticated() }
        : {}),
    });
    const ref: Ref = { kind: 'EphemeralAccessRequest', namespace: ns, name, uid: request.metadata.uid };

    const current = decision.status === null ? request : { ...request, status: decision.status };
    // A plan first (the gateway applies one request's commands in order): the executor can be asked one write sooner, and a
    // plan never depends on this status write (an activation plan is only made once Applying is persisted).
    // Finalizers after it: they move the resourceVersion the status write is bound to.
    const plans = decision.actions.filter((a) => a.kind === 'createPlan');
    const scoped = { activationPlan, revokePlan };
    for (const action of plans) await this.act(action, current, ref, snapshotView, scoped, now);
    if (decision.status !== null) {
      await this.send(
        statusCommand(ref, replacingPatch(request.status, decision.status), request.metadata.resourceVersion),
        ref,
      );
      this.statusWrites.record(key, true, request.metadata.resourceVersion);
    }
    if (decision.transition !== null) {
      await this.send(
        { v: 1, command: 'record-event', target: refOf(ref), event: transitionEvent(decision.transition) },
        ref,
      );
      this.deps.audit(
        auditRecord(request, decision.transition, timestamp(now), decision.status ?? undefined),
      );
    }
    for (const action of decision.actions) {
      if (action.kind !== 'createPlan') await this.act(action, current, ref, snapshotView, scoped, now);
    }
    if (decision.deadline !== null) {
      await this.deps.schedule(
        {
          kind: decision.deadline.kind,
          namespace: ns,
          name,
          uid: request.metadata.uid ?? '',
          at: decision.deadline.at,
        },
        now,
      );
    }
    if (decision.waiting) this.retryLater(ns, name);
    if (resolved !== null) this.triggerTarget(ns, resolved.targetPolicyUid);
  }

  private async act(
    action: RequestAction,
    request: EphemeralAccessRequest,
    ref: Ref,
    target: TargetView | null,
    scoped: {
      readonly activationPlan: PostgresPolicyPlan | undefined;
      readonly revokePlan: PostgresPolicyPlan | undefined;
    },
    now: number,
  ): Promise<void> {
    const ns = ref.namespace;
    const { activationPlan } = scoped;
    switch (action.kind) {
      case 'addFinalizer':
        await this.send(finalizerCommand(ref, REQUEST_FINALIZER, true), ref);
        return;
      case 'removeFinalizer':
        await this.send(finalizerCommand(ref, REQUEST_FINALIZER, false), ref);
        return;
      case 'createPlan': {
        const name = planNameOf(request, action.operation);
        const existing = this.plan(ns, name);
        if (this.planCreates.pending(`${ns}/${name}`, existing) !== undefined) return;
        const fresh = existing === undefined;
        const view = this.planTarget(target, activationPlan);
        if (view === null) {
          this.deps.log.warn(
            `request ${ns}/${ref.name}: no target to build the ${action.operation} plan from`,
          );
          return;
        }
        const built = scopedPlanObject(
          request,
          request.status!.resolvedAccess!,
          view,
          action.operation,
          timestamp(now),
        );
        await this.send(createPlanCommand(ns, name, built.object, built.status), ref);
        this.planCreates.record(`${ns}/${name}`, true, existing?.metadata.resourceVersion);
        this.planStatusWrites.forget(`${ns}/${name}`);
        this.lastSent.delete(`${ns}/${name}`);
        // A new revoke plan: ask the executor at once; a revoke does not wait for its plan, which is only its
        // record (ADR 0013). An activation is sent once the cache shows its plan (the provenance anchor): sent
        // sooner it would wait on the gateway and spend its redeliveries. A re-armed plan waits for the cache.
        if (fresh && action.operation === 'Revoke')
          await this.sendScoped(request, action.operation, now, view.name);
        return;
      }
      case 'sendScoped':
        await this.sendScoped(request, action.operation, now);
        return;
      case 'deletePlan': {
        // Bound to the squatter's uid: a plan of ours created meanwhile under the name survives.
        const plan = action.operation === 'Activate' ? scoped.activationPlan : scoped.revokePlan;
        if (plan === undefined) return;
        await this.send(
          deleteCommand({
            kind: 'PostgresPolicyPlan',
            namespace: ns,
            name: plan.metadata.name ?? '',
            uid: plan.metadata.uid,
          }),
          ref,
        );
        this.deps.log.warn(
          `request ${ns}/${ref.name}: deleting PostgresPolicyPlan ${plan.metadata.name ?? ''} (uid ${plan.metadata.uid ?? ''}), which holds its ${action.operation} plan name but was not created by the access-scheduler`,
        );
        return;
      }
      default: {
        const never: never = action;
        return never;
      }
    }
  }

  /** The target facts a scoped plan carries: the target policy, or for a revoke the activation plan's. */
  private planTarget(
    target: TargetView | null,
    activationPlan: PostgresPolicyPlan | undefined,
  ): TargetView | null {
    if (target !== null && target.managedDatabaseIdentity !== null) return target;
    if (activationPlan === undefined) return null;
    const spec = activationPlan.spec;
    return {
      name: spec.policyRef.name,
      uid: '',
      generation: spec.policyGeneration,
      applies: true,
      suspended: false,
      roles: new Map(),
      managedDatabaseIdentity: spec.managedDatabaseIdentity,
      reconciliationMode: spec.reconciliationMode,
      guarded: false,
    };
  }

  /**
   * Asks the executor to run a scoped plan: one the cache shows, or (with `createdFor`, the target policy's
   * name) one whose create command was just published.
   */
  private async sendScoped(
    request: EphemeralAccessRequest,
    operation: ScopeOperation,
    now: number,
    createdFor?: string,
  ): Promise<void> {
    const ns = request.metadata.namespace ?? '';
    const planName = planNameOf(request, operation);
    const key = `${ns}/${planName}`;
    const plan = this.deps.cache.get('postgrespolicyplan', ns, planName);
    if (plan === undefined && createdFor === undefined) return; // the executor must find it
    // JetStream keeps an unacked request and redelivers it itself: asking again is only for a request lost
    // (dead-lettered, or sent by a scheduler that died). Resending sooner would pile duplicates on a busy executor.
    const last = this.lastSent.get(key);
    if (last !== undefined && now - last < (this.deps.resendMs ?? RESEND_MS)) return;
    const resolved = request.status!.resolvedAccess!;
    const policyName = createdFor ?? plan!.spec.policyRef.name;
    const uid = plan === undefined || createdFor !== undefined ? undefined : meta(plan).uid;
    const idempotencyKey = `${request.metadata.uid}/${operation}/${resolved.bundleHash}`;
    const message: ScopedExecuteRequestV1 = {
      v: 1,
      plan: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicyPlan',
        namespace: ns,
        name: planName,
        ...(uid ? { uid } : {}),
      },
      request: {
        apiVersion: API_VERSION,
        kind: 'EphemeralAccessRequest',
        namespace: ns,
        name: request.metadata.name ?? '',
        uid: request.metadata.uid ?? '',
      },
      policy: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        namespace: ns,
        name: policyName,
        uid: resolved.targetPolicyUid,
      },
      operation,
      bundleHash: resolved.bundleHash,
      idempotencyKey,
    };
    // A resend needs its own message id: JetStream drops a repeated id inside its duplicate window.
    // Revocations on their own subject: the executor consumes them ahead of activations (ADR 0013).
    await this.deps.publisher.publish(
      operation === 'Revoke' ? scopedRevokeRequestContract : scopedExecuteRequestContract,
      scopedRequestSubject(operation),
      message,
      `${idempotencyKey}/${now}`,
    );
    const expiresAt = revocationDueAt(request);
    const first = !this.lastSent.has(key);
    this.lastSent.set(key, now);
    if (operation === 'Revoke' && first && expiresAt !== undefined && now >= expiresAt) {
      this.deps.observeRevokeDispatch?.((now - expiresAt) / 1000);
    }
  }

  /** Records an executor result: the plan's status, the request's retained edges or error, then a pass. */
  async handleResult(result: ScopedExecuteResultV1): Promise<void> {
    const operation = result.operation;
    if (operation === 'Sweep') return this.handleSweepResult(result);
    const ns = result.request.namespace;
    const now = this.now();
    const requestObject = this.deps.cache.get('ephemeralaccessrequest', ns, result.request.name);
    const sameRequest = requestObject !== undefined && requestObject.metadata.uid === result.request.uid;
    const requestRef: Ref = {
      kind: 'EphemeralAccessRequest',
      namespace: ns,
      name: result.request.name,
      uid: result.request.uid,
    };
    if (sameRequest && result.outcome === 'Applied' && result.operation === 'Revoke') {
      // What was kept is recorded on the revoke plan (planStatusOfResult); the pass that ends the request
      // copies it into retainedMemberships, so a scheduler dying in between loses nothing.
      const expiresAt = revocationDueAt(requestObject);
      const denied = requestObject.status?.conditions?.some(
        (c) => c.type === 'Denied' && c.status === 'True',
      );
      if (expiresAt !== undefined && now >= expiresAt && !denied)
        this.deps.observeRevocationLag?.((now - expiresAt) / 1000);
    }
    if (sameRequest && result.outcome === 'Blocked') {
      await this.send(
        statusCommand(requestRef, {
          lastError: errorText(`${result.operation} blocked (${result.reason}): ${result.message}`),
        }),
        requestRef,
      );
      // Ask again after BLOCKED_RETRY_MS (the condition may clear, e.g. the original target restored).
      this.lastSent.set(
        `${ns}/${result.plan.name}`,
        now - (this.deps.resendMs ?? RESEND_MS) + BLOCKED_RETRY_MS,
      );
    }
    const patch = planStatusOfResult({ ...result, operation }, timestamp(now));
    if (patch !== null) {
      await this.send(
        statusCommand(
          { kind: 'PostgresPolicyPlan', namespace: ns, name: result.plan.name, uid: result.plan.uid },
          patch,
        ),
        requestRef,
      );
      // Shown by content (the phase), so the version it was based on does not matter.
      this.planStatusWrites.record(`${ns}/${result.plan.name}`, patch, undefined);
    }
    this.deps.log.log(
      `scoped ${result.operation} ${ns}/${result.plan.name}: ${result.outcome} (${result.reason})`,
    );
    this.statusWrites.forget(reqKey(ns, result.request.name));
    this.triggerRequest(ns, result.request.name);
  }

  /** A sweep's result: a revoked edge is a warning (something skipped a revoke); the rest is routine. */
  private handleSweepResult(result: ScopedExecuteResultV1): void {
    const line = `sweep of ${result.policy.namespace}/${result.policy.name}: ${result.outcome} (${result.reason}): ${result.message}`;
    if (result.outcome === 'Applied' && result.statements.length === 0) this.deps.log.log(line);
    else this.deps.log.warn(line);
  }

  private async reconcileAccessPolicy(ns: string, name: string): Promise<void> {
    if (this.stopped) return;
    const object = this.deps.cache.get('ephemeralaccesspolicy', ns, name);
    if (object === undefined) return;
    if (this.awaitingOwnWrite(eapKey(ns, name), object)) return;
    await accessPolicyPass(this.accessPolicyContext, object);
  }

  /**
   * Publishes one gateway command with a unique idempotency key, in the ordering of `owner` (the request or
   * access policy whose pass sends it): the gateway applies one owner's commands in the order sent.
   */
  private async send(command: UnkeyedCommand, owner: Ref): Promise<void> {
    this.sequence += 1;
    const idempotencyKey = `access-scheduler/${command.target.namespace}/${command.target.name}/${command.command}/${this.session}-${this.sequence}`;
    const orderingKey = `${owner.kind}/${owner.namespace}/${owner.name}`;
    const full = { ...command, idempotencyKey, orderingKey } as K8sCommandV1;
    try {
      await this.deps.publisher.publish(
        k8sCommandContract,
        k8sCommandSubject('access-scheduler', command.command),
        full,
        idempotencyKey,
      );
    } catch (error) {
      const where = `${command.command} ${command.target.kind} ${command.target.namespace}/${command.target.name}`;
      throw new Error(`${where}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }
}
