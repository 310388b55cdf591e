// Per-replica dispatch state shared by the request handler: the per-database mutex, the per-server slots of
// policy executions (EXECUTOR_SERVER_CONCURRENCY) and the metrics of how long requests queued for either.
import { Counter, Histogram } from 'prom-client';
import type { ConnectionSpec } from '@rolepolicy/catalog';
import { KeyedMutex, KeyedSlots, type ServiceMetrics } from '@rolepolicy/runtime';
import { serverKey } from './server-key.js';

/** Policy executions per PostgreSQL server and replica when nothing configures it (EXECUTOR_SERVER_CONCURRENCY). */
export const DEFAULT_SERVER_CONCURRENCY = 4;

/** What the request handler needs besides the service. */
export interface ExecutionDispatch {
  readonly mutex: KeyedMutex;
  /**
   * Policy executions at once per PostgreSQL server (`host:port`), EXECUTOR_SERVER_CONCURRENCY: a fleet of
   * many databases on one server never holds more of its connections than this bound allows.
   */
  readonly servers: KeyedSlots;
  /**
   * Waits for a slot of the server `connection` points at (`serverKey`) and answers its release; the wait is
   * `rp_executor_server_wait_seconds`. Take it before any session opens, release it after the last closed.
   */
  serverSlot(connection: ConnectionSpec): Promise<() => void>;
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
export function createExecutionDispatch(
  metrics: ServiceMetrics | undefined,
  serverConcurrency = DEFAULT_SERVER_CONCURRENCY,
): ExecutionDispatch {
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
  const serverWait =
    metrics === undefined
      ? undefined
      : new Histogram({
          name: 'rp_executor_server_wait_seconds',
          help:
            'Time a policy execution waited in this replica for a slot of its PostgreSQL server ' +
            '(EXECUTOR_SERVER_CONCURRENCY)',
          buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [metrics.registry],
        });
  const servers = new KeyedSlots(serverConcurrency);
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
    servers,
    serverSlot: async (connection) => {
      const queued = performance.now();
      const release = await servers.acquire(serverKey(connection));
      serverWait?.observe((performance.now() - queued) / 1000);
      return release;
    },
    observeCollision: (kind) => collisions?.inc({ kind }),
    observeWait: (ms) => histogram?.observe(ms / 1000),
    observeScopedStage: (operation, stage, ms) => stages?.observe({ operation, stage }, ms / 1000),
  };
}
