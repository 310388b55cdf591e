// Carries out one execution request: lock the database, re-inspect, re-plan, decide (pure), run the SQL
// in the lock's transaction, publish the outcome. Never logs URLs, passwords or verifiers.
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
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
import { decideExecution, type ExecutionDecision } from './decide.js';
import { classifyFailure, transientCode } from './failures.js';
import { EXECUTION_OPTIONS, type ExecutionOptions } from './options.js';
import { expandRequest, replan } from './replan.js';
import { resultFor, type ResultFacts } from './result.js';

/** Handles execution requests; one instance per executor replica. */
@Injectable()
export class ExecutionService {
  private readonly logger = new Logger('Execution');

  constructor(
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
  ) {}

  /**
   * Runs one request to its outcome and publishes it. Throws only for transient trouble (connection,
   * lock timeout, NATS), so the transport redelivers; a redelivery re-plans and cannot apply twice.
   */
  async handle(
    request: ExecuteRequestV1 | ExecuteRequestV2,
    delivery: { readonly finalAttempt: boolean } = { finalAttempt: false },
  ): Promise<ExecuteResultV1> {
    const facts = request.v === 1 ? INCOMPLETE : await this.attempt(request, delivery.finalAttempt);
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
      return await this.execute(request);
    } catch (error) {
      const failure = classifyFailure(error);
      if (failure.class === 'transient' && !finalAttempt) throw error;
      return { phase: 'Failed', reason: failure.reason, message: failure.message, errorClass: failure.class };
    }
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

  private async execute(request: ExecuteRequestV2): Promise<ResultFacts> {
    const expanded = expandRequest(request);
    if (!expanded.ok) return { phase: 'Failed', reason: 'InvalidPolicy', message: expanded.message };
    const namespace = request.policy.namespace;
    const spec = await this.options.secrets.connection({ namespace, target: request.target });
    // The transaction holding the lock uses one connection; inspection reads on another.
    const connection = openConnection({ ...spec, maxConnections: 4, applicationName: 'rolepolicy-executor' });
    let before = 0;
    try {
      return await withRedaction(connection, () =>
        executeUnderLock<ResultFacts>(connection.db, async (): Promise<LockedDecision<ResultFacts>> => {
          const snapshot = await inspect(connection.db, expanded.scope, connection.target);
          const { plan, digest } = replan(request, expanded, snapshot);
          const decision = decideExecution(request, {
            changeDigest: digest.digest,
            changeDigestEncoding: digest.encoding,
            changeCount: plan.changes.length,
            blockers: plan.blockers,
            ownerTransferBlocked: plan.ownerTransferBlocked,
            observed: {
              physical: snapshot.identity.physical,
              logical: snapshot.identity.logical_fingerprint,
            },
          });
          if (decision.kind !== 'execute') {
            return { run: false, result: refusal(decision, digest.digest) };
          }
          const rendered = renderSql(plan.changes, {
            serverVersionNum: snapshot.server_version_num,
            inventory: snapshot.inventory,
            passwords: await this.verifiers(namespace, plan.changes, request),
            executorRole: snapshot.executor.role,
          });
          const probe = this.options.probe?.around(request);
          before = probe?.before.length ?? 0;
          const statements: ExecutableStatement[] = [
            ...(probe?.before ?? []),
            ...rendered.statements,
            ...(probe?.after ?? []),
          ];
          // Reported while the lock is held, so Applying is never published after the outcome.
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

  /** SCRAM verifiers for the plan's set_password changes; the cleartext never leaves this method. */
  private async verifiers(
    namespace: string,
    changes: readonly Change[],
    request: ExecuteRequestV2,
  ): Promise<Record<string, string>> {
    const verifiers: Record<string, string> = {};
    for (const change of changes) {
      if (change.kind !== 'set_password') continue;
      const cleartext = await this.options.secrets.password({
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
