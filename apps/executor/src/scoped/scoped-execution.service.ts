// Carries out one scoped execution request (ephemeral access Activate/Revoke, ADR 0008): verify the plan,
// request and policy from the cache, resolve the target policy's connection and check its fingerprint,
// then under the same per-database advisory lock as policy executions re-verify, inspect the bundle roles
// and the subject, compute the membership changes (pure), run the escape check and execute them in ONE
// transaction; publish a ScopedExecuteResultV1. Never logs URLs or passwords.
import { executionPhases, noteOutcome, noteScopedRequest } from '../execution/execution-trace.js';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  ExecutionError,
  executeUnderLock,
  inspect,
  openConnection,
  withRedaction,
  type CatalogConnection,
  type ConnectionSpec,
  type LockedDecision,
  type DatabaseTls,
  type RoleLockSessions,
  type WorkloadIdentity,
} from '@rolepolicy/catalog';
import {
  JetStreamPublisher,
  SUBJECTS,
  scopedExecuteResultContract,
  type ScopedExecuteRequestV1,
  type ScopedExecuteResultV1,
} from '@rolepolicy/contracts';
import type { Connection } from '@rolepolicy/kube';
import {
  anchoredRequests,
  escapeCheck,
  NO_PRIVILEGED_NAMESPACES,
  renderSql,
  scopedChanges,
  type PrivilegedNamespaces,
} from '@rolepolicy/policy';
import { AUDIT_LOG, NO_AUDIT, SERVICE_CONFIG, type AuditSink } from '@rolepolicy/runtime';
import type { PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { connectionTarget } from '../execution/cluster-view.js';
import { EXECUTION_CLUSTER, type ExecutionCluster } from '../execution/execution-cluster.js';
import { classifyFailure } from '../execution/failures.js';
import {
  DATABASE_TLS,
  DEFAULT_SEQUENCE_WAIT_MS,
  EXECUTION_OPTIONS,
  WORKLOAD_IDENTITY,
  type ExecutionOptions,
} from '../execution/options.js';
import type { ScopedStage, ServerWork } from '../execution/dispatch.js';
import { PlanNotVisibleError } from '../execution/secrets.js';
import { ROLE_LOCK_SESSIONS, roleLockDatabaseOf, roleLockFor } from '../execution/role-lock.js';
import { guardActivate, type GuardedRequest } from './activate-guard.js';
import { scopedResultFor, scopedResultMessageId, type ScopedFacts } from './scoped-result.js';
import { appliedFacts, bundleScope, declaredMemberships, refusalFacts, targetMoved } from './scoped-steps.js';
import { camel, stopwatch, type Hops } from './scoped-hops.js';
import { runSweep } from './sweep-execution.js';
import { scopedState, visibleState } from './scoped-state.js';
import { auditScoped } from './scoped-audit.js';
import { isPlanRequest, verifyScoped, type PlanRequest, type ScopedVerdict } from './scoped-verify.js';

/**
 * Seam for an in-process per-database mutex (the dispatch layer's): when provided, every scoped execution
 * runs inside `run(databaseKey, task)` so it queues behind policy executions of the same database in this
 * replica instead of waiting on the advisory lock. `databaseKey` is `<namespace>\u0000<target reference>`,
 * the key policy executions use. The advisory lock below serializes across replicas either way.
 */
export interface DatabaseSerializer {
  /**
   * A `revoke` queues ahead of the other work waiting for the same database; with `server`, `task` also holds a
   * slot of that server in the lane of `work` (a revocation's never waits for activations, ADR 0013; dispatch.ts).
   */
  run<T>(key: string, task: () => Promise<T>, work: ScopedWork, server?: ConnectionSpec): Promise<T>;
  /** Records one hop of a scoped execution (the dispatch layer's histogram). */
  observeStage?(operation: string, stage: ScopedStage, ms: number): void;
  /** Counts a scoped execution that collided with another session and is redelivered (the dispatch layer's counter). */
  observeCollision?(): void;
}

/** The server slots' lane of a scoped execution (a policy execution's is `policy`). */
type ScopedWork = Exclude<ServerWork, 'policy'>;

/** Injection token of an optional {@link DatabaseSerializer}. */
export const DATABASE_SERIALIZER = Symbol('rp.executor.database-serializer');

/** Handles scoped execution requests; one instance per executor replica. */
@Injectable()
export class ScopedExecutionService {
  private readonly logger = new Logger('ScopedExecution');

  constructor(
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
    @Optional() @Inject(EXECUTION_CLUSTER) private readonly cluster: ExecutionCluster | null = null,
    @Optional() @Inject(DATABASE_SERIALIZER) private readonly serializer: DatabaseSerializer | null = null,
    @Optional() @Inject(WORKLOAD_IDENTITY) private readonly identity: WorkloadIdentity | null = null,
    @Optional()
    @Inject(SERVICE_CONFIG)
    private readonly config: {
      readonly EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES?: PrivilegedNamespaces;
    } | null = null,
    @Optional() @Inject(DATABASE_TLS) private readonly tls: DatabaseTls = {},
    @Optional() @Inject(AUDIT_LOG) private readonly audit: AuditSink = NO_AUDIT,
    @Optional() @Inject(ROLE_LOCK_SESSIONS) private readonly locks: RoleLockSessions | null = null,
  ) {}

  /**
   * Runs one request to its outcome and publishes it. Throws only for transient trouble (database
   * unreachable, lock or statement timeouts, the plan not visible yet) so the transport redelivers with a
   * delay; on the last delivery that becomes `Blocked` instead of a silent dead letter.
   */
  async handle(
    request: ScopedExecuteRequestV1,
    delivery: { readonly finalAttempt: boolean; readonly queuedMs?: number } = { finalAttempt: false },
  ): Promise<ScopedExecuteResultV1> {
    noteScopedRequest(request);
    let facts: ScopedFacts;
    const hops: Hops = delivery.queuedMs === undefined ? {} : { queued: Math.round(delivery.queuedMs) };
    const lap = stopwatch(hops);
    try {
      facts = isPlanRequest(request)
        ? await this.execute(request, delivery.finalAttempt, lap)
        : await this.sweep(request);
    } catch (error) {
      const collided = error instanceof ExecutionError && error.concurrentUpdate;
      if (collided && !delivery.finalAttempt) this.serializer?.observeCollision?.();
      if (error instanceof ExecutionError && !(collided && !delivery.finalAttempt)) {
        facts = { outcome: 'Failed', reason: 'ExecutionFailed', message: error.message };
      } else {
        const failure = classifyFailure(error);
        if (failure.class === 'transient' && !delivery.finalAttempt) throw error;
        facts =
          failure.class === 'transient'
            ? { outcome: 'Blocked', reason: failure.reason, message: failure.message }
            : { outcome: 'Failed', reason: failure.reason, message: failure.message };
      }
    }
    const result = await this.report(request, facts);
    noteOutcome(result.outcome, result.reason, result.statements.length);
    lap('report');
    for (const [stage, ms] of Object.entries(hops))
      this.serializer?.observeStage?.(request.operation, stage as ScopedStage, ms);
    // One line per execution with the time each hop took (docs/ephemeral-access.md, "Where the time goes").
    this.logger.log({
      msg:
        `${request.plan.namespace}/${request.plan.name}: ${request.operation} ${result.outcome} ` +
        `(${result.reason}, ${result.statements.length} statements)`,
      operation: request.operation,
      outcome: result.outcome,
      ...Object.fromEntries(Object.entries(hops).map(([stage, ms]) => [`${camel(stage)}Ms`, ms])),
    });
    return result;
  }

  /** Reports a request refused before any work (e.g. an Activate on the revoke subject). */
  async refuse(request: ScopedExecuteRequestV1, facts: ScopedFacts): Promise<ScopedExecuteResultV1> {
    const result = await this.report(request, facts);
    this.logger.warn(
      `${request.plan.namespace}/${request.plan.name}: ${request.operation} refused: ${facts.reason}`,
    );
    return result;
  }

  private async report(request: ScopedExecuteRequestV1, facts: ScopedFacts): Promise<ScopedExecuteResultV1> {
    const result = scopedResultFor(request, facts, new Date());
    const subject = this.options.scopedResultSubject ?? SUBJECTS.scopedExecuteResult;
    await this.publisher.publish(
      { ...scopedExecuteResultContract, subject },
      subject,
      result,
      scopedResultMessageId(result),
    );
    return result;
  }

  /**
   * A Sweep of the target policy (ADR 0020), deciding everything under the lock. Not urgent in the mutex: it is
   * a backstop and never goes ahead of a revocation waiting for the same database.
   */
  private async sweep(request: ScopedExecuteRequestV1): Promise<ScopedFacts> {
    const cluster = this.cluster;
    if (cluster === null) {
      return {
        outcome: 'Failed',
        reason: 'ScopedExecutionUnavailable',
        message: 'this executor has no cluster view: nothing can be swept',
      };
    }
    return runSweep(
      {
        cluster,
        identity: this.identity,
        tls: this.tls,
        serialize: (key, task, server) =>
          this.serializer === null ? task() : this.serializer.run(key, task, 'sweep', server),
        roleLockDatabase: roleLockDatabaseOf(this.options.roleLockDatabase),
        roleLockSessions: this.locks,
        audit: this.audit,
      },
      request,
    );
  }

  private async execute(
    request: PlanRequest,
    finalAttempt: boolean,
    lap: (stage: ScopedStage) => void,
  ): Promise<ScopedFacts> {
    const cluster = this.cluster;
    if (cluster === null) {
      return {
        outcome: 'Failed',
        reason: 'ScopedExecutionUnavailable',
        message: 'this executor has no cluster view: scoped plans cannot be verified',
      };
    }
    const state = await visibleState(request, cluster, {
      sequenceWaitMs: this.options.cluster?.sequenceWaitMs ?? DEFAULT_SEQUENCE_WAIT_MS,
      visibilityWaitMs: this.options.cluster?.visibilityWaitMs ?? 5_000,
    });
    lap('visible');
    const verdict = verifyScoped(request, state);
    if (verdict.kind === 'not_visible') {
      if (!finalAttempt) throw new PlanNotVisibleError(verdict.message);
      return { outcome: 'Failed', reason: 'PlanNotFound', message: `${verdict.message}; nothing was run` };
    }
    if (verdict.kind === 'applied') {
      return {
        outcome: 'Applied',
        reason: 'AlreadyApplied',
        message: 'the plan is already Applied; nothing was run again',
      };
    }
    if (verdict.kind === 'stop') return verdict;
    const policy = state.policy as PostgresPolicy;
    // Checked before connecting (an invalid policy takes no connection); the memberships it declares are
    // read again under the lock.
    const declared = declaredMemberships(policy);
    if (!declared.ok) return declared.blocked;
    const namespace = request.policy.namespace;
    const resolved = await cluster.view.secrets.connection({
      namespace,
      policy: request.policy.name,
      target: connectionTarget(namespace, policy.spec.connection as Connection) ?? '',
    });
    // Resolved before the lock (a bad credential never holds the lock), checked against the snapshot's target.
    const connection = openConnection(
      {
        ...resolved.connection,
        maxConnections: 2,
        applicationName: 'rolepolicy-executor-scoped',
      },
      { identity: this.identity, tls: this.tls, namespace },
    );
    // Every scoped plan is membership DDL: it holds the server's role lock while it commits (ADR 0027).
    const roleLock = roleLockFor(
      resolved.connection,
      { identity: this.identity, tls: this.tls, namespace },
      roleLockDatabaseOf(this.options.roleLockDatabase),
      this.locks,
    );
    try {
      const moved = targetMoved(connection.target, verdict.targetDatabaseFingerprint);
      if (moved !== null) return moved;
      // The dispatch mutex's key of policy executions: namespace NUL the digest's target reference.
      const databaseKey = `${namespace}\u0000${resolved.target}`;
      lap('connect');
      const run = async (): Promise<ScopedFacts> => {
        lap('database_wait');
        try {
          const facts = await withRedaction(connection, () =>
            executeUnderLock<ScopedFacts>(
              connection.db,
              async (session) => {
                lap('lock_wait');
                const decision = await this.underLock(request, cluster, { ...connection, db: session });
                lap('decide');
                return decision;
              },
              roleLock.lock,
              executionPhases(),
            ),
          );
          lap('commit');
          return facts;
        } finally {
          // Closed inside the server's slot: the next holder's session finds the room this one leaves.
          await connection.close().catch(() => undefined);
        }
      };
      // A revocation goes ahead of activations and policy executions waiting for the same database, and takes
      // a server slot in a lane of its own (ADR 0013); an activation's is shared with policy executions.
      const work = request.operation === 'Revoke' ? 'revoke' : 'activate';
      const serializer = this.serializer;
      return await (serializer === null
        ? run()
        : serializer.run(databaseKey, run, work, resolved.connection));
    } finally {
      await connection.close().catch(() => undefined);
      await roleLock.close();
    }
  }

  /**
   * While the lock is held: gather (re-verify, read the memberships the policy declares, check the bundle and
   * guard an Activate), decide (inspect the bundle roles and the subject, compute the changes, run the escape
   * check), and hand the rendered statements to the lock's transaction.
   */
  private async underLock(
    request: PlanRequest,
    cluster: ExecutionCluster,
    connection: CatalogConnection,
  ): Promise<LockedDecision<ScopedFacts>> {
    const gathered = await this.gather(request, cluster, connection);
    if (gathered.kind === 'stop') return { run: false, result: gathered.facts };
    return this.decide(request, cluster, connection, gathered);
  }

  /**
   * Re-verifies from a synced cache (a revocation, deletion or recreate while this replica waited stops it
   * here), reads the memberships the policy declares, checks the bundle itself and guards an Activate.
   * A full sync, not the request's `resourceSequences` (ADR 0030, amended): those say what the scheduler saw
   * when it sent, and a denial, deletion or recreate stored since, or another replica's activation of the same
   * edge whose anchor a Revoke must keep, is newer than that. Only "everything stored before the lock" covers it.
   */
  private async gather(
    request: PlanRequest,
    cluster: ExecutionCluster,
    connection: CatalogConnection,
  ): Promise<Gathered> {
    const state = await scopedState(request, cluster, true);
    const verdict = verifyScoped(request, state);
    if (verdict.kind === 'applied') {
      return stop({ outcome: 'Applied', reason: 'AlreadyApplied', message: 'the plan is already Applied' });
    }
    if (verdict.kind === 'not_visible') {
      return stop({
        outcome: 'Failed',
        reason: 'PlanNotFound',
        message: `${verdict.message}; nothing was run`,
      });
    }
    if (verdict.kind === 'stop') return stop(verdict);
    // From the state just synced: an edit of the policy while this execution waited counts.
    const declared = declaredMemberships(state.policy as PostgresPolicy);
    if (!declared.ok) return stop(declared.blocked);
    // The bundle itself first: a snapshot granting to anyone but the subject touches nothing, not even a read.
    const bundleEscape = escapeCheck(request.operation, [], verdict.memberships, verdict.subject);
    if (!bundleEscape.ok) {
      return stop({
        outcome: 'Failed',
        reason: 'EscapeCheckFailed',
        message: `${bundleEscape.message}; nothing was run`,
      });
    }
    // An Activate is checked against its access policy and the live privilege graph (ADR 0021).
    if (request.operation === 'Activate') {
      const guarded = state.request as GuardedRequest;
      const refused = await guardActivate({
        message: request,
        request: guarded,
        accessPolicy: cluster.cache.get(
          'ephemeralaccesspolicy',
          request.plan.namespace,
          guarded.spec?.accessPolicyRef?.name ?? '',
        ),
        operator: this.config?.EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES ?? NO_PRIVILEGED_NAMESPACES,
        connection,
      });
      if (refused !== null) return stop(refused);
    }
    return { kind: 'proceed', verdict, declared: declared.memberships };
  }

  /**
   * Inspects the bundle roles and the subject, computes the membership changes against the other active
   * requests and the declared memberships, runs the escape check on them and renders the statements.
   */
  private async decide(
    request: PlanRequest,
    cluster: ExecutionCluster,
    connection: CatalogConnection,
    { verdict, declared }: Extract<Gathered, { kind: 'proceed' }>,
  ): Promise<LockedDecision<ScopedFacts>> {
    const snapshot = await inspect(
      connection.db,
      bundleScope(verdict.memberships, verdict.subject),
      connection.target,
    );
    const requestUid = request.request.uid!;
    const others = anchoredRequests({
      policyUid: request.policy.uid!,
      // Only requests resolved to the policy can hold on it (indexed: a revoke burst was O(n^2) listing all).
      requests: cluster.cache.withFields('ephemeralaccessrequest', request.request.namespace, {
        targetPolicyUid: request.policy.uid!,
      }),
      planNamed: (name) => cluster.cache.get('postgrespolicyplan', request.plan.namespace, name),
    }).filter((holder) => holder.uid !== requestUid);
    const computed = scopedChanges({
      operation: request.operation,
      request: { name: request.request.name, uid: requestUid },
      memberships: verdict.memberships,
      live: {
        memberships: snapshot.memberships,
        roles: snapshot.roles.map((r) => ({ name: r.name, inherit: r.state.inherit })),
        serverVersionNum: snapshot.server_version_num,
      },
      durable: declared,
      otherHolders: others,
    });
    if (computed.refusals.length > 0) return { run: false, result: refusalFacts(computed.refusals) };
    const escape = escapeCheck(request.operation, computed.changes, verdict.memberships, verdict.subject);
    if (!escape.ok) {
      return {
        run: false,
        result: {
          outcome: 'Failed',
          reason: 'EscapeCheckFailed',
          message: `${escape.message}; nothing was run`,
        },
      };
    }
    const rendered = renderSql(computed.changes, {
      serverVersionNum: snapshot.server_version_num,
      inventory: snapshot.inventory,
      passwords: {},
      executorRole: snapshot.executor.role,
    });
    return {
      run: true,
      statements: rendered.statements,
      result: appliedFacts(request.operation, computed, rendered.statements),
      afterCommit: async () => auditScoped(this.audit, request, computed.changes, connection.target),
    };
  }
}

/** What `gather` found: a stop (nothing runs), or the verified bundle and the declared memberships. */
type Gathered =
  | { readonly kind: 'stop'; readonly facts: ScopedFacts }
  | {
      readonly kind: 'proceed';
      readonly verdict: Extract<ScopedVerdict, { kind: 'proceed' }>;
      readonly declared: Parameters<typeof scopedChanges>[0]['durable'];
    };

const stop = (facts: ScopedFacts): Gathered => ({ kind: 'stop', facts });
