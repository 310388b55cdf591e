// Per-replica dispatch state shared by the request handler: the per-database mutex and the metric of how
// long requests queued behind another execution of the same database.
import { Counter, Histogram } from 'prom-client';
import { KeyedMutex, type ServiceMetrics } from '@rolepolicy/runtime';

/** What the request handler needs besides the service. */
export interface ExecutionDispatch {
  readonly mutex: KeyedMutex;
  /** Records the time a request queued behind the same database (milliseconds). */
  observeWait(ms: number): void;
  /** Records one hop of a scoped execution (milliseconds), see {@link SCOPED_STAGES}. */
  observeScopedStage(operation: string, stage: ScopedStage, ms: number): void;
  /**
   * Counts an execution whose statements collided with another session (23505 in a catalog index, 40001,
   * 40P01, a catalog tuple updated concurrently) and that is redelivered for it. With the
   * server's role lock (ADR 0027) role DDL of one server no longer collides, so this stays at 0.
   */
  observeCollision(kind: 'policy' | 'scoped'): void;
}

/**
 * The hops of a scoped execution, in order: `queued` (published to handled), `visible` (waiting for the plan
 * in the cache), `connect` (policy, Secret read, connection), `database_wait` (behind other work of the
 * database in this replica), `lock_wait` (transaction and advisory lock), `decide` (re-verify, inspect,
 * compute under the lock), `commit` (statements and commit), `report` (result published).
 */
export const SCOPED_STAGES = [
  'queued',
  'visible',
  'connect',
  'database_wait',
  'lock_wait',
  'decide',
  'commit',
  'report',
] as const;

/** One of {@link SCOPED_STAGES}. */
export type ScopedStage = (typeof SCOPED_STAGES)[number];

/** Injection token of the replica's {@link ExecutionDispatch}. */
export const EXECUTION_DISPATCH = Symbol('rp.executor.dispatch');

/** The dispatch state; `rp_executor_database_wait_seconds` is registered when the service has metrics. */
export function createExecutionDispatch(metrics: ServiceMetrics | undefined): ExecutionDispatch {
  const histogram =
    metrics === undefined
      ? undefined
      : new Histogram({
          name: 'rp_executor_database_wait_seconds',
          help: 'Time an execution request queued in this replica behind another execution of the same database',
          buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [metrics.registry],
        });
  const stages =
    metrics === undefined
      ? undefined
      : new Histogram({
          name: 'rolepolicy_ephemeral_scoped_stage_seconds',
          help: 'Time one scoped (ephemeral access) execution spent in each hop, by operation and stage',
          labelNames: ['operation', 'stage'],
          buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [metrics.registry],
        });
  const collisions =
    metrics === undefined
      ? undefined
      : new Counter({
          name: 'rp_executor_collisions_total',
          help: 'Executions whose statements collided with another session and were redelivered for it, by kind',
          labelNames: ['kind'],
          registers: [metrics.registry],
        });
  return {
    mutex: new KeyedMutex(),
    observeCollision: (kind) => collisions?.inc({ kind }),
    observeWait: (ms) => histogram?.observe(ms / 1000),
    observeScopedStage: (operation, stage, ms) => stages?.observe({ operation, stage }, ms / 1000),
  };
}
