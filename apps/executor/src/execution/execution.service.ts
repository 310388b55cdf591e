// Carries out one execution request: read the fresh plan and policy, resolve the connection, lock the
// database, re-inspect, re-plan, decide (pure), write plan status, run the SQL in the lock's transaction,
// publish the outcome. Never logs URLs, passwords or verifiers.
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  ExecutionError,
  executeUnderLock,
  inspect,
  inspectUnlessUnchanged,
  openConnection,
  withRedaction,
  type CatalogConnection,
  type ExecutableStatement,
  type LockedDecision,
  type PgCatalog,
  type DatabaseTls,
  type RoleLockSessions,
  type WorkloadIdentity,
} from '@rolepolicy/catalog';
import {
  JetStreamPublisher,
  SUBJECTS,
  executeResultContract,
  scopeDigest,
  type ExecuteRequestV1,
  type ExecuteRequestV2,
  type ExecuteResultV1,
} from '@rolepolicy/contracts';
import {
  SCRAM_SALT_LENGTH,
  renderSql,
  scramSha256Verifier,
  type Change,
  type ManagedScope,
} from '@rolepolicy/policy';
import type { Kysely } from 'kysely';
import { AUDIT_LOG, NO_AUDIT, logRecord, type AuditSink } from '@rolepolicy/runtime';
import { appliedRecord, failedRecord } from './audit.js';
import { planDecision, planPhase } from '@rolepolicy/plan-lifecycle';
import { decideExecution } from './decide.js';
import { EXECUTION_DISPATCH, type ExecutionDispatch } from './dispatch.js';
import { EXECUTION_CLUSTER, type ExecutionCluster } from './execution-cluster.js';
import { classifyFailure } from './failures.js';
import { freshVerdict, planVisible, presenceVerdict, type FreshState } from './fresh-verdict.js';
import { planRef } from './cluster-view.js';
import {
  DATABASE_TLS,
  DEFAULT_SEQUENCE_WAIT_MS,
  EXECUTION_OPTIONS,
  WORKLOAD_IDENTITY,
  type ExecutionOptions,
  type LockHolderProbe,
} from './options.js';
import {
  INCOMPLETE,
  changedWhileWaiting,
  executedFacts,
  executionFailed,
  passwordSourceChanged,
  refusal,
  targetChanged,
  verdictFacts,
} from './outcomes.js';
import type { PlanStatusWrite } from './plan-status.js';
import {
  expandRequest,
  freshInputs,
  replan,
  requestInputs,
  type Expanded,
  type LockedRead,
  type PlanningInputs,
  type Prepared,
} from './replan.js';
import { withPolicyHeldAccess } from './replan-held-access.js';
import { DEFAULT_ROLE_LOCK_DATABASE, ROLE_LOCK_SESSIONS, roleLockFor } from './role-lock.js';
import { resultFor, type ResultFacts } from './result.js';
import {
  PasswordSourceChangedError,
  PlanNotVisibleError,
  SecretUnavailableError,
  type ExecutionSecretResolver,
} from './secrets.js';
import { isMissingGenerated } from '@rolepolicy/kube';
import { executionPhases, inApplyingSpan, noteOutcome, noteRequest } from './execution-trace.js';

/** Handles execution requests; one instance per executor replica. */
@Injectable()
export class ExecutionService {
  private readonly logger = new Logger('Execution');

  private readonly secrets: ExecutionSecretResolver;
  /** Deliveries whose plan and policy were read synced under the lock (recordOutcome needs no second sync). */
  private readonly lockedReads = new WeakSet<ExecuteRequestV2>();

  constructor(
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
    @Optional() @Inject(EXECUTION_CLUSTER) private readonly cluster: ExecutionCluster | null = null,
    @Optional() @Inject(WORKLOAD_IDENTITY) private readonly identity: WorkloadIdentity | null = null,
    @Optional() @Inject(DATABASE_TLS) private readonly tls: DatabaseTls = {},
    @Optional() @Inject(AUDIT_LOG) private readonly audit: AuditSink = NO_AUDIT,
    @Optional() @Inject(EXECUTION_DISPATCH) private readonly dispatch: ExecutionDispatch | null = null,
    @Optional()
    @Inject(ROLE_LOCK_SESSIONS)
    private readonly roleLockSessions: RoleLockSessions | null = null,
  ) {
    const secrets = cluster?.view.secrets ?? options.secrets;
    if (secrets === undefined) throw new Error('the executor has no secret resolver');
    this.secrets = secrets;
  }

  /**
   * Runs one request to its outcome and publishes it. Throws only for transient trouble (connection,
   * lock timeout, NATS), so the transport redelivers; a redelivery re-plans and cannot apply twice.
   */
  async handle(
    request: ExecuteRequestV1 | ExecuteRequestV2,
    delivery: { readonly finalAttempt: boolean } = { finalAttempt: false },
  ): Promise<ExecuteResultV1> {
    noteRequest({
      kind: 'PostgresPolicyPlan',
      namespace: request.plan.namespace,
      name: request.plan.name,
      ...(request.v === 2 ? { policy: request.policy.name } : {}),
      digest: request.changeDigest,
    });
    const facts = request.v === 1 ? INCOMPLETE : await this.attempt(request, delivery.finalAttempt);
    if (request.v === 2) {
      try {
        await this.recordOutcome(request, facts);
      } catch (error) {
        // Retried by redelivery; on the last delivery the result still goes out (the planner records it).
        if (!delivery.finalAttempt) throw error;
        this.logger.warn(
          `${request.plan.namespace}/${request.plan.name}: plan status not written (${(error as Error).name})`,
        );
      }
    }
    const result = resultFor(request, facts, new Date());
    noteOutcome(result.phase, result.reason, result.statementCount);
    await this.publish(result);
    if (request.v === 2 && result.phase === 'Failed') this.audit.write(failedRecord(request, result));
    this.logger.log(
      logRecord(
        `${request.plan.namespace}/${request.plan.name}: ${result.phase} (${result.reason}, ${result.statementCount} statements)`,
        {
          kind: 'PostgresPolicyPlan',
          namespace: request.plan.namespace,
          name: request.plan.name,
          plan: request.plan.name,
          digest: result.executedDigest ?? result.approvedDigest,
          phase: result.phase,
          reason: result.reason,
        },
      ),
    );
    return result;
  }

  /** Runs the request; a transient failure is rethrown (redelivery) unless this is the last delivery. */
  private async attempt(request: ExecuteRequestV2, finalAttempt: boolean): Promise<ResultFacts> {
    try {
      return await this.execute(request, finalAttempt);
    } catch (error) {
      const failure = classifyFailure(error);
      if (failure.class === 'transient' && !finalAttempt) throw error;
      return { phase: 'Failed', reason: failure.reason, message: failure.message, errorClass: failure.class };
    }
  }

  /**
   * Writes Applied or Failed on the plan (cluster wiring only), before the result is published, so the
   * plan never stays Applying after its transaction committed even while the planner is down. Only a live,
   * approved plan is written: a refused or skipped request leaves the plan to the planner.
   */
  private async recordOutcome(request: ExecuteRequestV2, facts: ResultFacts): Promise<void> {
    if (this.cluster === null) return;
    // After the synced read under the lock the cache as held is at least as new: no second sync. Before
    // any such read (a refusal or failure ahead of the lock), a rejection or supersession meanwhile counts.
    const { plan } = this.lockedReads.has(request)
      ? this.cluster.view.held(planRef(request))
      : await this.freshState(request);
    if (plan === undefined) return;
    const phase = planPhase(plan);
    const live = phase === 'Pending' || phase === 'Approved' || phase === 'Applying';
    if (!live || planDecision(plan) !== 'approved') return;
    let write: PlanStatusWrite | undefined;
    if (facts.phase === 'Applied' && (facts.reason === 'Executed' || phase === 'Applying')) {
      write = { phase: 'Applied' };
    } else if (facts.phase === 'Failed') {
      write = { phase: 'Failed', reason: facts.reason, message: facts.message };
    }
    if (write) await this.cluster.status.write(request, plan, write, facts.committedAt ?? new Date());
  }

  /** The plan and policy after a sync: everything stored before the call is seen. */
  private freshState(request: ExecuteRequestV2): Promise<FreshState> {
    if (this.cluster === null) return Promise.resolve({ policy: undefined, plan: undefined });
    return this.cluster.view.fresh(planRef(request));
  }

  private async publish(result: ExecuteResultV1): Promise<void> {
    const subject = this.options.resultSubject ?? SUBJECTS.executeResult;
    const contract = { ...executeResultContract, subject };
    await this.publisher.publish(
      contract,
      subject,
      result,
      `${result.idempotencyKey}/${result.phase}/${result.reason}`,
    );
  }

  private async execute(request: ExecuteRequestV2, finalAttempt: boolean): Promise<ResultFacts> {
    const prepared = await this.prepare(request, finalAttempt);
    if (!prepared.ok) return prepared.facts;
    // One session holds the lock, inspects and applies (executeUnderLock); a second is never opened unless
    // something reads beside it, which then costs a session instead of waiting on itself.
    const connection = openConnection(
      {
        ...prepared.connection,
        maxConnections: 2,
        applicationName: 'rolepolicy-executor',
      },
      { identity: this.identity, tls: this.tls, namespace: request.policy.namespace },
    );
    // Connected only when the plan carries role or membership DDL (ADR 0027).
    const roleLock = roleLockFor(
      prepared.connection,
      { identity: this.identity, tls: this.tls, namespace: request.policy.namespace },
      this.options.roleLockDatabase === undefined
        ? DEFAULT_ROLE_LOCK_DATABASE
        : this.options.roleLockDatabase,
      this.roleLockSessions,
    );
    const probe = this.options.probe?.around(request);
    const phases = executionPhases();
    // Nothing is connected yet: wait for one of this server's EXECUTOR_SERVER_CONCURRENCY slots (dispatch.ts).
    const release = await this.dispatch?.serverSlot(prepared.connection);
    try {
      const facts = await withRedaction(connection, () =>
        executeUnderLock<ResultFacts>(
          connection.db,
          (session) => this.underLock(request, { ...connection, db: session }, prepared, probe),
          roleLock.lock,
          phases,
        ),
      );
      return phases.committedAt === undefined ? facts : { ...facts, committedAt: phases.committedAt };
    } catch (error) {
      if (!(error instanceof ExecutionError)) throw error;
      // A collision with another session is retried by redelivery (classifyFailure), except on the last one.
      if (error.concurrentUpdate && !finalAttempt) throw error;
      return executionFailed(request, error, probe?.before.length ?? 0);
    } finally {
      await connection.close().catch(() => undefined);
      await roleLock.close();
      release?.();
    }
  }

  /**
   * Everything before the lock: with the cluster wired, the fresh plan and policy (waiting for the plan to
   * become visible) and planning from the policy as it is now (an edit with different effects then shows
   * as a digest mismatch); then expansion and the connection, resolved before the lock so a bad credential
   * never holds the database lock for a pool timeout.
   */
  private async prepare(request: ExecuteRequestV2, finalAttempt: boolean): Promise<Prepared> {
    let inputs: PlanningInputs = requestInputs(request);
    if (this.cluster !== null) {
      // At least what the planner saw (no round trip when the request says how far that was): a stop taken
      // here rests on events newer than the planner's decision, and a go is judged again under the lock.
      const fresh = await this.cluster.view.visible(planRef(request), {
        seen: request.resourceSequences,
        sequenceWaitMs: this.options.cluster?.sequenceWaitMs ?? DEFAULT_SEQUENCE_WAIT_MS,
        visibilityWaitMs: this.options.cluster?.visibilityWaitMs ?? 5_000,
      });
      // Sent before the gateway published the plan or its decision: retried by redelivery with backoff;
      // only the last delivery reports what it found.
      if (!finalAttempt && !planVisible(fresh)) {
        throw new PlanNotVisibleError(
          `plan ${request.plan.namespace}/${request.plan.name} with a decision is not visible yet`,
        );
      }
      const present = presenceVerdict(request, fresh);
      if (present.kind !== 'proceed') return { ok: false, facts: verdictFacts(present) };
      if (fresh.target !== request.target) return { ok: false, facts: targetChanged(fresh.target) };
      inputs = freshInputs(request, fresh.policy!.spec);
    }
    const expanded = expandRequest(request, inputs);
    if (!expanded.ok) {
      return { ok: false, facts: { phase: 'Failed', reason: 'InvalidPolicy', message: expanded.message } };
    }
    const resolved = await this.secrets.connection({
      namespace: request.policy.namespace,
      target: request.target,
      policy: request.policy.name,
    });
    if (resolved.target !== request.target) return { ok: false, facts: targetChanged(resolved.target) };
    return { ok: true, inputs, expanded, connection: resolved.connection };
  }

  /**
   * While the lock is held: gather (re-inspect, re-plan, read the fresh plan and policy), decide (a denial,
   * suspend or edit since the request, or while this replica waited, stops the SQL here), then carry out
   * (write Applying and hand over the statements to run).
   */
  private async underLock(
    request: ExecuteRequestV2,
    connection: CatalogConnection,
    prepared: Extract<Prepared, { ok: true }>,
    probe: ReturnType<LockHolderProbe['around']> | undefined,
  ): Promise<LockedDecision<ResultFacts>> {
    const read = await this.lockedRead(request, connection, prepared);
    if (!read.ok) return { run: false, result: read.facts };
    const stop = this.lockedVerdict(request, prepared, read);
    if (stop !== null) return { run: false, result: stop };
    return this.lockedRun(request, connection, prepared, read, probe);
  }

  /** Gather under the lock: the catalog now, the fresh plan and policy, and the plan re-made from them. */
  private async lockedRead(
    request: ExecuteRequestV2,
    connection: CatalogConnection,
    prepared: Extract<Prepared, { ok: true }>,
  ): Promise<{ ok: false; facts: ResultFacts } | ({ ok: true } & LockedRead)> {
    const { inputs, expanded } = prepared;
    const snapshot = await inspect(connection.db, expanded.scope, connection.target);
    // Synced: an approval withdrawn, a supersession or an edit stored before this line stops the SQL.
    const fresh = await this.freshState(request);
    this.lockedReads.add(request);
    // Memberships that anchored ephemeral access holds, composed as the planner did (replan-held-access.ts).
    const held = withPolicyHeldAccess(
      this.cluster?.cache ?? null,
      { namespace: request.policy.namespace, uid: fresh.policy?.metadata.uid },
      expanded,
      snapshot.identity.logical_fingerprint,
      snapshot.memberships,
    );
    if (!held.ok) return { ok: false, facts: held.facts };
    const { plan, digest } = replan(request, held.expanded, snapshot, inputs);
    const observed = { physical: snapshot.identity.physical, logical: snapshot.identity.logical_fingerprint };
    return { ok: true, snapshot, fresh, plan, digest, observed };
  }

  /** Decide under the lock: the facts that stop the run, or null to execute. */
  private lockedVerdict(
    request: ExecuteRequestV2,
    prepared: Extract<Prepared, { ok: true }>,
    { fresh, plan, digest, observed }: LockedRead,
  ): ResultFacts | null {
    if (this.cluster !== null) {
      const changed = changedWhileWaiting(request, fresh, prepared.inputs);
      if (changed !== undefined) return changed;
      const verdict = freshVerdict(request, fresh, {
        changeDigest: digest.digest,
        changeDigestEncoding: digest.encoding,
        changeCount: plan.changes.length,
        observed,
      });
      if (verdict.kind !== 'proceed') return { ...verdictFacts(verdict), recomputedDigest: digest.digest };
    }
    const decision = decideExecution(request, {
      changeDigest: digest.digest,
      changeDigestEncoding: digest.encoding,
      changeCount: plan.changes.length,
      blockers: plan.blockers,
      ownerTransferBlocked: plan.ownerTransferBlocked,
      observed,
    });
    return decision.kind === 'execute' ? null : refusal(decision, digest.digest);
  }

  /** Carry out under the lock: passwords, SQL, Applying written and reported before any statement. */
  private async lockedRun(
    request: ExecuteRequestV2,
    connection: CatalogConnection,
    { expanded }: Extract<Prepared, { ok: true }>,
    { snapshot, fresh, plan, digest }: LockedRead,
    probe: ReturnType<LockHolderProbe['around']> | undefined,
  ): Promise<LockedDecision<ResultFacts>> {
    let passwords: Record<string, string>;
    let generated: Record<string, string>;
    try {
      ({ verifiers: passwords, generated } = await this.verifiers(plan.changes, request, expanded));
    } catch (error) {
      if (!(error instanceof PasswordSourceChangedError)) throw error;
      return { run: false, result: passwordSourceChanged(error.message, digest.digest) };
    }
    const rendered = renderSql(plan.changes, {
      serverVersionNum: snapshot.server_version_num,
      inventory: snapshot.inventory,
      passwords,
      executorRole: snapshot.executor.role,
    });
    const count = rendered.statements.length;
    // Written and reported while the lock is held and before any statement, so Applying always precedes
    // the outcome; a failed write leaves the transaction without SQL (retried later). `at`: applyingSince.
    const at = new Date();
    await inApplyingSpan(at, async () => {
      if (this.cluster !== null && fresh.plan !== undefined) {
        await this.cluster.status.write(request, fresh.plan, { phase: 'Applying' }, at);
      }
      await this.publish(resultFor(request, executedFacts('Applying', digest.digest, count), at));
    });
    const statements: ExecutableStatement[] = [
      ...(probe?.before ?? []),
      ...rendered.statements,
      ...(probe?.after ?? []),
    ];
    return {
      run: true,
      statements,
      result: { ...executedFacts('Applied', digest.digest, count), appliedPasswordSourceVersions: generated },
      afterCommit: async (session) => {
        // Committed: the record is written before anything else learns of the outcome (status, result).
        this.audit.write(appliedRecord(request, digest.digest, plan.changes, count, connection.target));
        await this.sendAppliedSnapshot(request, session, expanded.scope, connection.target);
      },
    };
  }

  /**
   * Reads the managed scope (and its fingerprint) right after the commit on the session that still holds
   * the lock, and sends it to the planners: their verification pass then needs no new session and no cold
   * inspection (ADR 0017). Best effort; the planner inspects as before when nothing arrives.
   */
  private async sendAppliedSnapshot(
    request: ExecuteRequestV2,
    session: Kysely<PgCatalog>,
    scope: ManagedScope,
    target: CatalogConnection['target'],
  ): Promise<void> {
    const send = this.cluster?.appliedSnapshot;
    if (send === undefined || request.policy.uid === undefined) return;
    const readAt = new Date().toISOString();
    const read = await inspectUnlessUnchanged(session, scope, target);
    if (read.kind !== 'snapshot') return;
    send({
      v: 1,
      plan: request.plan,
      policy: request.policy,
      target: request.target,
      scopeDigest: scopeDigest(scope),
      readAt,
      fingerprint: read.fingerprint,
      snapshot: { ...read.snapshot },
    });
  }

  /**
   * SCRAM verifiers for the plan's set_password changes; the cleartext never leaves this method. A generated
   * password still `:missing` gets its Secret now (the plan was approved and its digest just checked), and
   * its real source version is returned in `generated`.
   */
  private async verifiers(
    changes: readonly Change[],
    request: ExecuteRequestV2,
    expanded: Extract<Expanded, { ok: true }>,
  ): Promise<{ verifiers: Record<string, string>; generated: Record<string, string> }> {
    const namespace = request.policy.namespace;
    const verifiers: Record<string, string> = {};
    const generated: Record<string, string> = {};
    for (const change of changes) {
      if (change.kind !== 'set_password') continue;
      const sourceVersion = request.passwordSources[change.name] ?? change.password_source;
      let cleartext: string;
      if (isMissingGenerated(sourceVersion)) {
        const role = expanded.desired.roles.find((r) => r.name === change.name);
        const length = role?.password?.kind === 'generate' ? role.password.length : undefined;
        if (
          this.secrets.generated === undefined ||
          length === undefined ||
          request.policy.uid === undefined
        ) {
          throw new SecretUnavailableError(
            `generated password of role ${change.name} cannot be created here`,
          );
        }
        const created = await this.secrets.generated({
          namespace,
          role: change.name,
          sourceVersion,
          policy: { name: request.policy.name, uid: request.policy.uid },
          length,
        });
        cleartext = created.password;
        generated[change.name] = created.sourceVersion;
      } else {
        cleartext = await this.secrets.password({ namespace, role: change.name, sourceVersion });
      }
      verifiers[change.name] = scramSha256Verifier(cleartext, randomBytes(SCRAM_SALT_LENGTH));
    }
    return { verifiers, generated };
  }
}
