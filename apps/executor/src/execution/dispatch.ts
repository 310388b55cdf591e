// Per-replica dispatch state shared by the request handlers: the per-database mutex, the per-server slots
// (policy executions and activations in EXECUTOR_SERVER_CONCURRENCY, revocations and sweeps in slots of their
// own, EXECUTOR_SERVER_REVOKE_CONCURRENCY, ADR 0013) and the metrics of how long requests queued for either.
import { Counter, Histogram } from 'prom-client';
import { serverKey, type ConnectionSpec } from '@rolepolicy/catalog';
import { KeyedMutex, KeyedSlots, type ServiceMetrics } from '@rolepolicy/runtime';

/** Policy executions per PostgreSQL server and replica when nothing configures it (EXECUTOR_SERVER_CONCURRENCY). */
export const DEFAULT_SERVER_CONCURRENCY = 4;

/** Revocations and sweeps per server and replica when nothing configures it (EXECUTOR_SERVER_REVOKE_CONCURRENCY). */
export const DEFAULT_SERVER_REVOKE_CONCURRENCY = 8;

/**
 * What holds a server slot: `policy` and `activate` share EXECUTOR_SERVER_CONCURRENCY; `revoke` and `sweep`
 * have EXECUTOR_SERVER_REVOKE_CONCURRENCY of their own, a revocation ahead of waiting sweeps, so a revocation
 * never waits for a policy execution or an activation to give a slot back (ADR 0013).
 */
export type ServerWork = 'policy' | 'activate' | 'revoke' | 'sweep';

/** What the request handler needs besides the service. */
export interface ExecutionDispatch {
  readonly mutex: KeyedMutex;
  /**
   * Policy executions and activations at once per PostgreSQL server (`host:port`), EXECUTOR_SERVER_CONCURRENCY:
   * a fleet of many databases on one server never holds more of its connections than this bound allows.
   */
  readonly servers: KeyedSlots;
  /** Revocations and sweeps at once per server (EXECUTOR_SERVER_REVOKE_CONCURRENCY), apart from `servers`. */
  readonly revocations: KeyedSlots;
  /**
   * Waits for a slot of the server `connection` points at (`serverKey`) in the lane of `work` and answers its
   * release; the wait is `rp_executor_server_wait_seconds{work}`. Take it before any session opens (after the
   * per-database mutex), release it after the last closed.
   */
  serverSlot(connection: ConnectionSpec, work?: ServerWork): Promise<() => void>;
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
  serverRevokeConcurrency = DEFAULT_SERVER_REVOKE_CONCURRENCY,
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
            'Time an execution waited in this replica for a slot of its PostgreSQL server, by work (policy and ' +
            'activate share EXECUTOR_SERVER_CONCURRENCY, revoke and sweep EXECUTOR_SERVER_REVOKE_CONCURRENCY)',
          labelNames: ['work'],
          buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [metrics.registry],
        });
  const servers = new KeyedSlots(serverConcurrency);
  const revocations = new KeyedSlots(serverRevokeConcurrency);
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
    revocations,
    serverSlot: async (connection, work = 'policy') => {
      const queued = performance.now();
      const lane = work === 'revoke' || work === 'sweep' ? revocations : servers;
      const release = await lane.acquire(serverKey(connection), work === 'revoke');
      serverWait?.observe({ work }, (performance.now() - queued) / 1000);
      return release;
    },
    observeCollision: (kind) => collisions?.inc({ kind }),
    observeWait: (ms) => histogram?.observe(ms / 1000),
    observeScopedStage: (operation, stage, ms) => stages?.observe({ operation, stage }, ms / 1000),
  };
}
