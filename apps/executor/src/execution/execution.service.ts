// Carries out one execution request: read the fresh plan and policy, resolve the connection, lock the
// database, re-inspect, re-plan, decide (pure), write plan status, run the SQL in the lock's transaction,
// publish the outcome. Never logs URLs, passwords or verifiers.
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  ExecutionError,
  executeUnderLock,
  inspect,
  openConnection,
  withRedaction,
  type ExecutableStatement,
  type LockedDecision,
} from '@rolepolicy/catalog';
import {
  JetStreamPublisher,
  SUBJECTS,
  executeResultContract,
  type ExecuteRequestV1,
  type ExecuteRequestV2,
  type ExecuteResultV1,
} from '@rolepolicy/contracts';
import { SCRAM_SALT_LENGTH, renderSql, scramSha256Verifier, type Change } from '@rolepolicy/policy';
import { planDecision, planPhase } from '../../../planner/src/lifecycle/approval.js';
import { decideExecution, type ExecutionDecision } from './decide.js';
import { EXECUTION_CLUSTER, type ExecutionCluster } from './execution-cluster.js';
import { classifyFailure, transientCode } from './failures.js';
import {
  freshVerdict,
  planVisible,
  presenceVerdict,
  type FreshState,
  type FreshVerdict,
} from './fresh-verdict.js';
import { EXECUTION_OPTIONS, type ExecutionOptions } from './options.js';
import type { PlanStatusWrite } from './plan-status.js';
import { expandRequest, freshInputs, replan, requestInputs, type PlanningInputs } from './replan.js';
import { resultFor, type ResultFacts } from './result.js';
import { PasswordSourceChangedError, PlanNotVisibleError, type ExecutionSecretResolver } from './secrets.js';

/** Handles execution requests; one instance per executor replica. */
@Injectable()
export class ExecutionService {
  private readonly logger = new Logger('Execution');

  private readonly secrets: ExecutionSecretResolver;

  constructor(
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
    @Optional() @Inject(EXECUTION_CLUSTER) private readonly cluster: ExecutionCluster | null = null,
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
    const facts = request.v === 1 ? INCOMPLETE : await this.attempt(request, delivery.finalAttempt);
    if (request.v === 2) await this.recordOutcome(request, facts);
    const result = resultFor(request, facts, new Date());
    await this.publish(result);
    this.logger.log(
      `${request.plan.namespace}/${request.plan.name}: ${result.phase} (${result.reason}, ${result.statementCount} statements)`,
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
    const { plan } = await this.freshState(request);
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
    if (write) await this.cluster.status.write(request, plan, write, new Date());
  }

  /** The fresh state, waiting up to `visibilityWaitMs` for the plan and its decision to become visible. */
  private async visibleState(request: ExecuteRequestV2): Promise<FreshState> {
    const deadline = Date.now() + (this.options.cluster?.visibilityWaitMs ?? 5_000);
    for (;;) {
      const fresh = await this.freshState(request);
      if (planVisible(fresh) || Date.now() >= deadline) return fresh;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private freshState(request: ExecuteRequestV2): Promise<FreshState> {
    if (this.cluster === null) return Promise.resolve({ policy: undefined, plan: undefined });
    return this.cluster.view.fresh({
      namespace: request.plan.namespace,
      plan: request.plan.name,
      policy: request.policy.name,
    });
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
    // With the cluster wired, plan from the policy as it is now (an edit with different effects then shows
    // as a digest mismatch), and stop early when the plan or policy is gone.
    let inputs: PlanningInputs = requestInputs(request);
    if (this.cluster !== null) {
      const fresh = await this.visibleState(request);
      // The planner may send the request before the gateway has published the plan or its approval; that
      // is retried (redelivery with backoff), and only the last delivery reports what it found.
      if (!finalAttempt && !planVisible(fresh)) {
        throw new PlanNotVisibleError(
          `plan ${request.plan.namespace}/${request.plan.name} with a decision is not visible yet`,
        );
      }
      const present = presenceVerdict(request, fresh);
      if (present.kind !== 'proceed') return verdictFacts(present);
      if (fresh.target !== request.target) return targetChanged(fresh.target);
      inputs = freshInputs(request, fresh.policy!.spec);
    }
    const expanded = expandRequest(request, inputs);
    if (!expanded.ok) return { phase: 'Failed', reason: 'InvalidPolicy', message: expanded.message };
    const namespace = request.policy.namespace;
    // Resolved before the lock: a bad credential must not hold the database lock for a pool timeout.
    const query = { namespace, target: request.target, policy: request.policy.name };
    const resolved = await this.secrets.connection(query);
    if (resolved.target !== request.target) return targetChanged(resolved.target);
    // The transaction holding the lock uses one connection; inspection reads on another.
    const connection = openConnection({
      ...resolved.connection,
      maxConnections: 4,
      applicationName: 'rolepolicy-executor',
    });
    let before = 0;
    try {
      return await withRedaction(connection, () =>
        executeUnderLock<ResultFacts>(connection.db, async (): Promise<LockedDecision<ResultFacts>> => {
          const snapshot = await inspect(connection.db, expanded.scope, connection.target);
          const { plan, digest } = replan(request, expanded, snapshot, inputs);
          const observed = {
            physical: snapshot.identity.physical,
            logical: snapshot.identity.logical_fingerprint,
          };
          // The plan and policy as they are now, under the lock: a denial, suspend or edit since the
          // request (or while this replica waited for the lock) stops the SQL here.
          const fresh = await this.freshState(request);
          if (this.cluster !== null) {
            const still = this.stillSame(request, fresh, inputs);
            if (still !== undefined) return { run: false, result: still };
            const verdict = freshVerdict(request, fresh, {
              changeDigest: digest.digest,
              changeDigestEncoding: digest.encoding,
              changeCount: plan.changes.length,
              observed,
            });
            if (verdict.kind !== 'proceed') {
              return { run: false, result: { ...verdictFacts(verdict), recomputedDigest: digest.digest } };
            }
          }
          const decision = decideExecution(request, {
            changeDigest: digest.digest,
            changeDigestEncoding: digest.encoding,
            changeCount: plan.changes.length,
            blockers: plan.blockers,
            ownerTransferBlocked: plan.ownerTransferBlocked,
            observed,
          });
          if (decision.kind !== 'execute') {
            return { run: false, result: refusal(decision, digest.digest) };
          }
          let passwords: Record<string, string>;
          try {
            passwords = await this.verifiers(namespace, plan.changes, request);
          } catch (error) {
            // A rotated password Secret needs a new plan (the digest bound the old version), not a failure.
            if (!(error instanceof PasswordSourceChangedError)) throw error;
            const facts: ResultFacts = {
              phase: 'Superseded',
              reason: 'PasswordSourceChanged',
              message: error.message,
              recomputedDigest: digest.digest,
            };
            return { run: false, result: facts };
          }
          const rendered = renderSql(plan.changes, {
            serverVersionNum: snapshot.server_version_num,
            inventory: snapshot.inventory,
            passwords,
            executorRole: snapshot.executor.role,
          });
          const probe = this.options.probe?.around(request);
          before = probe?.before.length ?? 0;
          const statements: ExecutableStatement[] = [
            ...(probe?.before ?? []),
            ...rendered.statements,
            ...(probe?.after ?? []),
          ];
          // Written and reported while the lock is held and before any statement, so Applying always
          // precedes the outcome; a failed write leaves the transaction without SQL (retried later).
          if (this.cluster !== null && fresh.plan !== undefined) {
            await this.cluster.status.write(request, fresh.plan, { phase: 'Applying' }, new Date());
          }
          await this.publish(
            resultFor(
              request,
              {
                phase: 'Applying',
                reason: 'Executing',
                message: `running ${rendered.statementCount} statements in one transaction`,
                recomputedDigest: digest.digest,
                executedDigest: digest.digest,
                statementCount: rendered.statements.length,
              },
              new Date(),
            ),
          );
          return {
            run: true,
            statements,
            result: {
              phase: 'Applied',
              reason: 'Executed',
              message: `applied ${rendered.statements.length} statements in one transaction`,
              recomputedDigest: digest.digest,
              executedDigest: digest.digest,
              statementCount: rendered.statements.length,
            },
          };
        }),
      );
    } catch (error) {
      if (!(error instanceof ExecutionError)) throw error;
      const index = error.statementIndex - before;
      return {
        phase: 'Failed',
        reason: 'ExecutionFailed',
        message: error.message,
        errorClass: transientCode(error.sqlState) ? 'transient' : 'permanent',
        recomputedDigest: request.changeDigest,
        lastError: {
          message: error.message,
          statementIndex: index >= 0 ? index : null,
          statement: error.statement,
          sqlState: error.sqlState !== null && error.sqlState.length === 5 ? error.sqlState : null,
        },
      };
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  /**
   * Under the lock: the policy may have changed while this replica waited. A different connection target
   * is refused; different planning inputs are skipped (the planner re-plans and asks again).
   */
  private stillSame(
    request: ExecuteRequestV2,
    fresh: FreshState,
    inputs: PlanningInputs,
  ): ResultFacts | undefined {
    if (fresh.policy === undefined) return undefined; // freshVerdict reports it
    if (fresh.target !== request.target) return targetChanged(fresh.target);
    if (JSON.stringify(freshInputs(request, fresh.policy.spec)) !== JSON.stringify(inputs)) {
      return {
        phase: 'Skipped',
        reason: 'PolicyChanged',
        message: 'the policy changed while the executor waited for the database lock; no SQL was run',
      };
    }
    return undefined;
  }

  /** SCRAM verifiers for the plan's set_password changes; the cleartext never leaves this method. */
  private async verifiers(
    namespace: string,
    changes: readonly Change[],
    request: ExecuteRequestV2,
  ): Promise<Record<string, string>> {
    const verifiers: Record<string, string> = {};
    for (const change of changes) {
      if (change.kind !== 'set_password') continue;
      const cleartext = await this.secrets.password({
        namespace,
        role: change.name,
        sourceVersion: request.passwordSources[change.name] ?? change.password_source,
      });
      verifiers[change.name] = scramSha256Verifier(cleartext, randomBytes(SCRAM_SALT_LENGTH));
    }
    return verifiers;
  }
}

const INCOMPLETE: ResultFacts = {
  phase: 'Failed',
  reason: 'RequestIncomplete',
  message: 'execute request v1 carries no planning inputs; the executor needs v2 to re-plan',
};

/** The result of a fresh-state verdict that stops the request (never `proceed`). */
function verdictFacts(verdict: Exclude<FreshVerdict, { kind: 'proceed' }>): ResultFacts {
  switch (verdict.kind) {
    case 'skip':
      return { phase: 'Skipped', reason: verdict.reason, message: verdict.message };
    case 'superseded':
      return { phase: 'Superseded', reason: verdict.reason, message: verdict.message };
    case 'fail_closed':
      return { phase: 'Failed', reason: verdict.reason, message: verdict.message };
    default: {
      const unreachable: never = verdict;
      return unreachable;
    }
  }
}

/** The policy's connection now resolves to another target than the one the digest bound. */
function targetChanged(now: string | undefined): ResultFacts {
  return {
    phase: 'Superseded',
    reason: 'TargetReferenceChanged',
    message: `the policy's connection now resolves to target ${now ?? '(none)'}, not the approved one; no SQL was run`,
  };
}

/** The result of a decision that runs no SQL. */
function refusal(decision: Exclude<ExecutionDecision, { kind: 'execute' }>, recomputed: string): ResultFacts {
  switch (decision.kind) {
    case 'converged':
      return {
        phase: 'Applied',
        reason: decision.reason,
        message: decision.message,
        recomputedDigest: recomputed,
      };
    case 'superseded':
      return {
        phase: 'Superseded',
        reason: decision.reason,
        message: decision.message,
        recomputedDigest: recomputed,
      };
    case 'fail_closed':
      return {
        phase: 'Failed',
        reason: decision.reason,
        message: decision.message,
        recomputedDigest: recomputed,
      };
    default: {
      const unreachable: never = decision;
      return unreachable;
    }
  }
}
