// The scheduler's Prometheus metrics: timer queue sizes (read from Redis at scrape time), how late
// timers fire, and the revocation lag (revocation time minus expiresAt) that issue 13 promises to bound.
import { Gauge, Histogram, type Registry } from 'prom-client';
import { QUEUE_NAMES, type AccessTimers, type TimerKind } from './queues.js';

/** Metrics the scheduler records. */
export interface SchedulerMetrics {
  readonly revocationLag: Histogram<never>;
  readonly revokeDispatch: Histogram<never>;
  readonly timerLatency: Histogram<'queue'>;
  readonly transitions: Gauge<'phase'>;
}

const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** Registers the metrics; queue sizes are collected from `timers` on each scrape. */
export function schedulerMetrics(
  registry: Registry,
  timers: () => AccessTimers | undefined,
): SchedulerMetrics {
  new Gauge({
    name: 'rolepolicy_ephemeral_queue_jobs',
    help: 'Jobs of each timer queue by state (waiting, delayed, active, failed); absent while Redis does not answer',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const current = timers();
      if (current === undefined) return;
      const counts = await current.counts();
      for (const kind of Object.keys(QUEUE_NAMES) as TimerKind[]) {
        const c = counts[kind];
        if (c === undefined) continue;
        for (const state of ['waiting', 'delayed', 'active', 'failed'] as const) {
          this.set({ queue: QUEUE_NAMES[kind], state }, c[state] ?? 0);
        }
      }
    },
  });
  return {
    revocationLag: new Histogram({
      name: 'rolepolicy_ephemeral_revocation_lag_seconds',
      help: 'Time from a request expiresAt to the executor reporting its memberships revoked',
      buckets: LAG_BUCKETS,
      registers: [registry],
    }),
    revokeDispatch: new Histogram({
      name: 'rolepolicy_ephemeral_revoke_dispatch_seconds',
      help: 'Time from a request expiresAt to the scheduler sending its revocation to the executor (the scheduler share of the lag)',
      buckets: LAG_BUCKETS,
      registers: [registry],
    }),
    timerLatency: new Histogram({
      name: 'rolepolicy_ephemeral_timer_latency_seconds',
      help: 'How late a timer job started after its due time, by queue',
      labelNames: ['queue'] as const,
      buckets: LAG_BUCKETS,
      registers: [registry],
    }),
    transitions: new Gauge({
      name: 'rolepolicy_ephemeral_requests',
      help: 'EphemeralAccessRequests known to the scheduler, by phase',
      labelNames: ['phase'] as const,
      registers: [registry],
    }),
  };
}
