// Notification delivery metrics: delivered, failed attempts and dead-lettered deliveries by type, how long a
// delivery took from queueing (retries included), and how many sink ConfigMaps validate.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Metrics the notifier records. */
export interface NotificationMetrics {
  readonly delivered: Counter<'type' | 'format'>;
  readonly failed: Counter<'type'>;
  readonly deadLettered: Counter<'type'>;
  readonly latency: Histogram<never>;
  readonly sinks: Gauge<'state'>;
}

/** Registers the notification metrics. */
export function notificationMetrics(registry: Registry): NotificationMetrics {
  return {
    delivered: new Counter({
      name: 'rolepolicy_notifications_delivered_total',
      help: 'Notifications a sink accepted (2xx), by occurrence type and payload format',
      labelNames: ['type', 'format'] as const,
      registers: [registry],
    }),
    failed: new Counter({
      name: 'rolepolicy_notification_attempts_failed_total',
      help: 'Notification delivery attempts that failed (retried with backoff until dead-lettered), by type',
      labelNames: ['type'] as const,
      registers: [registry],
    }),
    deadLettered: new Counter({
      name: 'rolepolicy_notifications_dead_lettered_total',
      help: 'Notifications given up on (attempts exhausted or a 4xx answer), kept in the failed state of their queue',
      labelNames: ['type'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'rolepolicy_notification_delivery_seconds',
      help: 'Time from queueing a notification to its sink accepting it, retries included',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    sinks: new Gauge({
      name: 'rolepolicy_notification_sinks',
      help: 'rolepolicy-notifications ConfigMaps the scheduler sees, by state (valid, invalid)',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
  };
}
