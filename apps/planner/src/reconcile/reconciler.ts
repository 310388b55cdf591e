// The planner's reconcile loop, in the leading replica (ADR 0011): cache changes and timers wake a policy,
// one pass per policy at a time. A pass gathers (change-keys.ts, policy-state.ts, and policy-view.ts: the
// cache with our own writes on top), inspects (inspection.ts), decides (the pure lifecycle) and carries out
// the decision's steps as ordered gateway commands (command-sink.ts; policy status through policy-view.ts);
// execution results are recorded in result-handling.ts.
import type { Subscription } from '@nats-io/transport-node';
import {
  SUBJECTS,
  appliedSnapshotContract,
  decodePayload,
  type AnyCached,
  type ResourceChange,
  type ExecuteResultV1,
} from '@rolepolicy/contracts';
import type { MembershipEdge } from '@rolepolicy/policy';
import {
  decideReconcile,
  reconcileGate,
  type ConflictVerdict,
  type PlanningOutcome,
  type PostgresPolicy,
  type ReconcileDecision,
} from '@rolepolicy/plan-lifecycle';
import { ConflictProof, type ProvenVerdict } from './conflict-proof.js';
import { ConvergedMemo } from './converged-memo.js';
import { PolicyView } from './policy-view.js';
import { ReconcilingAnnouncer } from './reconciling-announcer.js';
import { CommandSink } from './command-sink.js';
import { handleResult, type ResultContext } from './result-handling.js';
import { newPolicyState, resultPending, type PolicyState } from './policy-state.js';
import { ChangeKeys, policyKey } from './change-keys.js';
import { Inspection, executionInputs } from './inspection.js';
import { AppliedSnapshots } from './applied-snapshots.js';
import { commandsOf } from '../planning/gateway-commands.js';
import { KeyedQueue, Slots } from '@rolepolicy/runtime';
import { planEventsOf } from '../planning/plan-events.js';
import { decisionAuditRecords } from '../planning/plan-audit.js';
import {
  APPLIED_SNAPSHOT_MAX_KEPT,
  APPLIED_SNAPSHOT_TTL_MS,
  EXECUTING_STATUS_AFTER_MS,
  RESULT_RECHECK_MS,
} from './pass-timing.js';
import { preparePolicy, type NotPrepared, type Prepared } from '../planning/prepare.js';
import { readPolicySecrets, secretReadError, secretsNamedBy } from '@rolepolicy/plan-lifecycle';
import { ReviewRecorder } from './review-recording.js';
import { PeerClaims, livePolicyAt } from './peer-claims.js';
import { SecretReaders, versionsRead } from './secret-readers.js';
import { policySignature, versionOf } from './triggers.js';
import { CandidatePlanner } from '../candidates/candidate-planner.js';
import { DEFAULT_CANDIDATE_SETTINGS } from '../candidates/resources.js';
import { DEFAULT_CONVERGED_MEMO, type ReconcilerDeps } from './reconciler-deps.js';
import { WakeTraces, inPassSpan, inStepSpan, notePass, passLogRecord } from './pass-trace.js';

export { DEFAULT_CONVERGED_MEMO, type ReconcilerDeps };

/** The reconcile loop of one planner replica. */
export class Reconciler {
  private readonly queue: KeyedQueue;
  private readonly policies = new Map<string, PolicyState>();
  /** The Secret versions each followed policy's last pass read, by Secret (secret-readers.ts). */
  private readonly secretReaders = new SecretReaders();
  /** Gathers which policies a cache change concerns (change-keys.ts). */
  private readonly changes: ChangeKeys;
  /** Post-apply snapshots from the executors, for the verification pass (ADR 0017). */
  private readonly appliedSnapshots = new AppliedSnapshots(
    APPLIED_SNAPSHOT_TTL_MS,
    APPLIED_SNAPSHOT_MAX_KEPT,
  );
  private appliedSubscription: Subscription | undefined;
  /** The cache with our own writes on top, and the policy status writes (policy-view.ts). */
  private readonly view: PolicyView;
  /** `Reconciling` of a pass that waits for its turn or inspects for over a second. */
  private readonly announcer: ReconcilingAnnouncer;
  private readonly sink: CommandSink;
  private readonly inspection: Inspection;
  private readonly results: ResultContext;
  /** The injected clock (epoch ms). */
  private readonly now: () => number;
  private readonly peers: PeerClaims;
  private readonly proof: ConflictProof;
  private readonly review: ReviewRecorder;
  /** Per policy key: held access edges of its last planned pass. */
  private readonly heldAccessByPolicy = new Map<string, readonly MembershipEdge[]>();
  private readonly candidates: CandidatePlanner;
  /** Per policy key: the last full pass that found nothing to change (the fingerprint path's reference). */
  private readonly converged: ConvergedMemo;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;
  /** The trace of the change that woke each policy, continued by its pass (pass-trace.ts). */
  private readonly wakeTraces = new WakeTraces();

  constructor(private readonly deps: ReconcilerDeps) {
    this.now = deps.now ?? Date.now;
    this.sink = new CommandSink(deps.publisher, deps.log, deps.cache);
    this.changes = new ChangeKeys(deps.cache);
    this.view = new PolicyView({
      cache: deps.cache,
      sink: this.sink,
      state: (key) => this.policies.get(key),
      now: this.now,
      onOwnWriteExpired: deps.onOwnWriteExpired,
    });
    this.announcer = new ReconcilingAnnouncer({
      run: (key, task) => this.queue.run(key, task),
      view: this.view,
      followed: (key) => !this.stopped && this.policies.has(key),
      now: this.now,
    });
    this.converged = deps.converged ?? new ConvergedMemo(deps.convergedMemo ?? DEFAULT_CONVERGED_MEMO);
    this.proof = new ConflictProof({
      nats: deps.nats,
      secrets: deps.secrets,
      inspectTimeoutMs: deps.inspectTimeoutMs,
      inspectSealKey: deps.inspectSealKey,
    });
    this.peers = new PeerClaims({
      reader: deps.secrets,
      policyAt: (key) => livePolicyAt(deps.cache, key),
      versionOf: (namespace, name) => versionOf(deps.cache.get('secret', namespace, name)),
      onGone: (uid) => this.proof.forget(uid),
    });
    this.review = new ReviewRecorder({ send: (command) => this.sink.send(command), log: deps.log });
    this.inspection = new Inspection({
      cache: deps.cache,
      nats: deps.nats,
      inspectTimeoutMs: deps.inspectTimeoutMs,
      inspectSealKey: deps.inspectSealKey,
      ...(deps.onAppliedSnapshot ? { onAppliedSnapshot: deps.onAppliedSnapshot } : {}),
      converged: this.converged,
      appliedSnapshots: this.appliedSnapshots,
      proof: this.proof,
      review: this.review,
      heldAccess: this.heldAccessByPolicy,
      takeVerifyPlan: (key) => {
        const state = this.policies.get(key);
        const verify = state?.verifyPlan;
        if (state !== undefined) state.verifyPlan = undefined;
        return verify;
      },
      nextSequence: () => this.sink.nextSequence(),
      now: this.now,
    });
    this.results = {
      cache: deps.cache,
      log: deps.log,
      now: this.now,
      runInSlot: (key, task) => this.queue.run(key, task),
      state: (key) => this.policies.get(key),
      trigger: (key) => this.trigger(key),
      hurry: (key) => this.queue.hurry(key),
      requeue: (key, seconds) => this.requeue(key, seconds),
      currentPolicy: (namespace, name) => this.view.currentPolicy(namespace, name),
      currentPlan: (namespace, name) => this.view.currentPlan(namespace, name),
      resultHandled: (namespace, name, status) => this.view.resultHandled(namespace, name, status),
      writeStatus: (policy, status, cause) => this.view.writeStatus(policy, status, cause),
      recordEvent: (event, policy) => this.sink.recordEvent(event, policy),
      hasCandidates: (policy) => this.candidates.candidatesOf(policy).length > 0,
    };
    this.candidates = new CandidatePlanner({
      cache: deps.cache,
      nats: deps.nats,
      secrets: deps.secrets,
      send: (command) => this.sink.send(command),
      recordEvent: (event, policy) => this.sink.recordEvent(event, policy),
      planCreated: (plan) => this.view.planCreated(plan),
      settings: deps.candidateSettings ?? DEFAULT_CANDIDATE_SETTINGS,
      inspectTimeoutMs: deps.inspectTimeoutMs,
      inspectSealKey: deps.inspectSealKey,
      log: deps.log,
      ...(deps.onCandidateInspection ? { onInspection: deps.onCandidateInspection } : {}),
      ...(deps.onOwnWriteExpired ? { onOwnWriteExpired: deps.onOwnWriteExpired } : {}),
      now: this.now,
    });
    this.queue = new KeyedQueue(
      (key, error) =>
        deps.log.error(
          `reconcile of ${key} failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
      deps.passConcurrency === undefined ? {} : { slots: new Slots(deps.passConcurrency) },
    );
  }

  /** Follows the cache and reconciles every known policy once. */
  start(): void {
    this.unsubscribe = this.deps.cache.onChange((change) => this.onChange(change));
    this.appliedSubscription = this.deps.nats.subscribe(SUBJECTS.appliedSnapshot, {
      callback: (error, msg) => {
        if (error !== null) return;
        const decoded = decodePayload(appliedSnapshotContract, msg.data);
        if (decoded.ok) this.appliedSnapshots.put(decoded.value);
      },
    });
    this.changes.seedPlans(this.deps.cache.list('postgrespolicyplan'));
    for (const policy of this.deps.cache.list('postgrespolicy')) {
      // Every policy the cache holds at start is a peer to read at the first pass.
      this.peers.policyChanged(policyKey(policy.metadata.namespace, policy.metadata.name));
      this.onPolicy(policy);
    }
  }

  /** Stops timers and waits for running passes. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.appliedSubscription?.unsubscribe();
    for (const state of this.policies.values()) clearTimeout(state.timer);
    this.announcer.clear();
    await this.queue.idle();
    this.view.dropHeld();
  }

  /**
   * The held access edges (admin false) the policy's last planned pass added to its desired
   * memberships; candidate planning in the parent's context adds the same so it never revokes held access.
   */
  heldEdges(namespace: string, name: string): readonly MembershipEdge[] {
    return this.heldAccessByPolicy.get(policyKey(namespace, name)) ?? [];
  }

  /** Resolves when no pass is running or queued (tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Carries out what a cache change asks (change-keys.ts gathers it). */
  private onChange(change: ResourceChange): void {
    // Every policy and Secret change marks the peers it concerns before anything else (peer-claims.ts).
    if (change.kind === 'postgrespolicy') this.peers.policyChanged(policyKey(change.namespace, change.name));
    if (change.kind === 'secret') this.peers.secretChanged(change.namespace, change.name);
    for (const effect of this.changes.effectsOf(change)) {
      if (effect.kind === 'wake') this.wakeTraces.note(effect.key, change.trace);
      if (effect.kind === 'policy')
        this.wakeTraces.note(policyKey(change.namespace, change.name), change.trace);
      switch (effect.kind) {
        case 'wake':
          if (effect.ifKnown !== true || this.policies.has(effect.key)) this.trigger(effect.key);
          break;
        case 'policy':
          this.onPolicy(effect.object);
          break;
        case 'forget':
          this.forget(effect.key);
          break;
        case 'planGone':
          this.view.planDeleted(effect.namespace, effect.name);
          break;
        case 'planSeen':
          this.review.onPlan(effect.object);
          break;
        case 'secret':
          for (const key of this.secretReaders.staleReaders(effect.namespace, effect.name, effect.version))
            this.trigger(key);
          break;
      }
    }
  }

  private onPolicy(object: AnyCached): void {
    const key = policyKey(object.metadata.namespace, object.metadata.name);
    const signature = policySignature(object);
    const state = this.policies.get(key);
    if (state !== undefined && state.signature === signature) return;
    if (state === undefined) {
      this.policies.set(key, newPolicyState(signature, object.metadata.uid));
    } else {
      state.signature = signature;
    }
    this.trigger(key);
  }

  private forget(key: string): void {
    const state = this.policies.get(key);
    if (state !== undefined) clearTimeout(state.timer);
    this.policies.delete(key);
    this.secretReaders.forget(key);
    this.wakeTraces.forget(key);
    this.view.forget(key);
    this.heldAccessByPolicy.delete(key);
    this.converged.forget(key);
  }

  /** Queues a pass for every known policy (e.g. whether decisions are authenticated changed). */
  triggerAll(): void {
    for (const key of this.policies.keys()) this.trigger(key);
  }

  /** Queues a pass for the policy (merged with one already queued). */
  trigger(key: string): void {
    if (this.stopped) return;
    this.announcer.requested(key);
    // A pass that confirms an apply goes first: it is cheap (the executor's snapshot) and finishes a policy
    // that a person may be waiting on, where the others of a burst are first passes. Asked as the pass is
    // requested; an Applied result arriving while it waits hurries it (result-handling.ts).
    void this.queue.schedule(
      key,
      () => this.reconcile(key),
      () => this.policies.get(key)?.verifyPlan !== undefined,
    );
  }

  private requeue(key: string, seconds: number): void {
    const state = this.policies.get(key);
    if (state === undefined || this.stopped) return;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => this.trigger(key), Math.max(0, seconds * 1000));
    state.timer.unref();
  }

  /**
   * Conflicts with every other live policy whose connection reached the database (their Secrets read again
   * only when a change marked them; ADR 0024 for the proof). Only the peers that can overlap the policy (a
   * role name, or a schema on a same-named database, in common) are compared: the others cannot block it.
   */
  private async conflictOf(policy: PostgresPolicy, prepared: Prepared): Promise<ProvenVerdict> {
    const claims = await this.peers.overlapping(prepared.claims);
    return this.proof.verdict(
      { policy, claims: prepared.claims, connection: prepared.connection },
      claims,
      (peer) => this.peers.policyOf(peer),
    );
  }

  /**
   * Expands the policy and resolves its connection and passwords from the Secrets as the API has them now
   * (read through the gateway for this pass only). A read that fails is the pass's error.
   */
  private async prepare(policy: PostgresPolicy): Promise<Prepared | NotPrepared> {
    try {
      const secrets = await readPolicySecrets(this.deps.secrets, policy);
      return preparePolicy(secrets.policy, secrets.lookup);
    } catch (error) {
      return { ok: false, error: secretReadError(error), watchedSecrets: secretsNamedBy(policy).names };
    }
  }

  /** One level-triggered pass for a policy, in the trace of the change that woke it. */
  private reconcile(key: string): Promise<void> {
    this.announcer.started(key);
    return inPassSpan(key, this.wakeTraces.take(key), () => this.pass(key));
  }

  private async pass(key: string): Promise<void> {
    if (this.stopped) return;
    const started = performance.now();
    const [namespace = '', name = ''] = key.split('/');
    const policy = this.view.currentPolicy(namespace, name);
    const state = this.policies.get(key);
    if (policy === null || state === undefined || policy.metadata.deletionTimestamp !== undefined) return;
    if (resultPending(state, namespace, this.deps.cache, this.now())) {
      // The result handler wakes the policy; this timer only covers a result that never comes.
      state.deferred = true;
      this.requeue(key, RESULT_RECHECK_MS / 1000);
      return;
    }
    state.deferred = false;
    let prepared = await this.prepare(policy);
    // Only while the policy is still followed as this state: a pass that outlived its policy reads for nobody.
    if (this.policies.get(key) === state)
      this.secretReaders.read(
        key,
        namespace,
        versionsRead(prepared, (s) => versionOf(this.deps.cache.get('secret', namespace, s))),
      );
    let conflict: ConflictVerdict = { kind: 'clear' };
    if (prepared.ok) {
      try {
        const proven = await this.conflictOf(policy, prepared);
        if (proven.kind === 'verdict') conflict = proven.verdict;
        else prepared = { ok: false, error: proven.error, watchedSecrets: [] };
      } catch (error) {
        prepared = { ok: false, error: secretReadError(error), watchedSecrets: [] };
      }
    }
    const gate = reconcileGate(policy, conflict);
    this.review.endPass(key);
    const verifying = state.verifyPlan?.name; // the Applied result this pass verifies (inspection takes it)
    let outcome: PlanningOutcome | null = null;
    if (gate.kind === 'inspect')
      outcome = prepared.ok
        ? await this.announcer.inspecting(policy, () => this.inspection.inspectAndPlan(policy, prepared))
        : { kind: 'failed', error: prepared.error };
    const latest = this.view.currentPolicy(namespace, name);
    if (latest !== null && latest.metadata.generation !== policy.metadata.generation) {
      // The spec moved while this pass planned the older content: deciding with the newer policy would
      // record its generation as observed for effects it never planned. The newer generation's pass follows.
      this.review.endPass(key);
      this.trigger(key);
      return;
    }
    const current = latest ?? policy;
    const plans = this.view.plansOf(current);
    // Promotion recognition (docs/candidates.md, section 4) reads the content the policy carried before this pass.
    const promotion = outcome?.kind === 'computed' ? await this.candidates.recognise(current, plans) : null;
    const decision = decideReconcile({
      policy: current,
      plans,
      conflict,
      outcome,
      planNameTaken: (plan) => this.view.planNameTaken(namespace, plan),
      now: new Date(this.now()).toISOString(),
      jitter: Math.random(),
      settings: this.deps.settings,
      verifying,
      ...(this.deps.decisions ? { decisions: this.deps.decisions() } : {}),
      ...(promotion?.handOver
        ? { promoted: { plan: promotion.handOver, previousContentDigest: promotion.previous } }
        : {}),
    });
    notePass(policy, decision);
    await this.carryOut(policy, decision, prepared.ok ? prepared : null);
    const plansNow = this.view.plansOf(policy);
    const auditAt = new Date(this.now()).toISOString();
    for (const r of decisionAuditRecords(decision.steps, policy, plansNow, auditAt))
      this.deps.audit?.write(r);
    await this.candidatePass(current, decision);
    this.review.endPass(key);
    this.deps.observe?.(decision.kind, (performance.now() - started) / 1000);
    const failed = outcome?.kind === 'failed' ? outcome.error.reason : undefined;
    this.deps.log.log(passLogRecord(key, policy, decision, failed));
    this.requeue(key, decision.requeueAfterSeconds);
  }

  /**
   * The policy's candidates, planned after its own pass in the same queue slot (docs/candidates.md, section 2). A
   * failure here is logged and never fails the policy's pass. `heldAccess`: the membership edges of active
   * ephemeral requests on this policy, composed in its own pass (ADR 0008).
   */
  private async candidatePass(decided: PostgresPolicy, decision: ReconcileDecision): Promise<void> {
    const { namespace, name } = decided.metadata;
    // The spec the decision was made for, with the status it wrote: a spec edit that reached the cache
    // during the pass (a merge) must not meet a gate opened by the previous content's convergence.
    const policy = { ...decided, status: decision.status };
    try {
      await this.candidates.afterPolicyPass({
        policy,
        decision,
        plans: this.view.plansOf(policy),
        heldAccess: this.heldEdges(namespace, name),
      });
    } catch (error) {
      this.deps.log.warn(
        `candidates of ${namespace}/${name}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Sends the decision's steps in order; each publish is acked by JetStream before the next. */
  private async carryOut(
    policy: PostgresPolicy,
    decision: ReconcileDecision,
    prepared: Prepared | null,
  ): Promise<void> {
    const key = policyKey(policy.metadata.namespace, policy.metadata.name);
    for (const original of decision.steps) {
      // A new durable plan carries the annotation of its review artifact (review-recording.ts).
      const step =
        original.kind === 'createPlan'
          ? { ...original, plan: this.review.recordPlan(key, policy, original.plan) }
          : original;
      const hold = decision.kind === 'execution_requested';
      await inStepSpan(step, policy, () => this.carryOutStep(key, policy, step, prepared, hold));
    }
  }

  /** One step of a decision: a command (or execution request) acked by JetStream before the next. */
  private async carryOutStep(
    key: string,
    policy: PostgresPolicy,
    step: ReconcileDecision['steps'][number],
    prepared: Prepared | null,
    hold: boolean,
  ): Promise<void> {
    if (step.kind === 'requestExecution') {
      if (prepared === null) return;
      const state = this.policies.get(key);
      const retry = state?.skipped.get(step.request.planName) ?? 0;
      await this.sink.requestExecution(step.request, retry, policy, prepared);
      state?.awaiting.set(step.request.planName, this.now());
      state?.requestedInputs.set(step.request.planName, executionInputs(policy, prepared));
      return;
    }
    if (step.kind === 'createPlan') this.view.planCreated(step.plan);
    if (step.kind === 'writePolicyStatus') {
      // Ready=Unknown/Applying is sent only if the execution's outcome does not follow within a second.
      if (hold) await this.view.holdStatus(policy, step.status, EXECUTING_STATUS_AFTER_MS);
      else await this.view.writeStatus(policy, step.status);
      return;
    }
    for (const command of commandsOf(step, policy)) await this.sink.send(command);
    for (const planEvent of planEventsOf(step, policy)) await this.sink.recordEvent(planEvent, policy);
  }

  /** Records an executor result on the policy (result-handling.ts; the executor writes the plan's phase). */
  handleResult(result: ExecuteResultV1): Promise<void> {
    return handleResult(this.results, result);
  }
}
