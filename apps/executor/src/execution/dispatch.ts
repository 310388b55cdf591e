// Per-replica dispatch state shared by the request handler: the per-database mutex and the metric of how
// long requests queued behind another execution of the same database.
import { Histogram } from 'prom-client';
import type { ServiceMetrics } from '@rolepolicy/runtime';
import { KeyedMutex } from './database-mutex.js';

/** What the request handler needs besides the service. */
export interface ExecutionDispatch {
  readonly mutex: KeyedMutex;
  /** Records the time a request queued behind the same database (milliseconds). */
  observeWait(ms: number): void;
}

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
  return {
    mutex: new KeyedMutex(),
    observeWait: (ms) => histogram?.observe(ms / 1000),
  };
}
