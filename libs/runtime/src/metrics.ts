// Prometheus metrics of one service: default process metrics plus message counters fed by the transport.
// One registry per service instance (not prom-client's global one), so tests can boot several in a process.
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import type { MessageOutcome, OutcomeObserver } from '@rolepolicy/contracts';

/** A service's registry and the counters every service exports. */
export type ServiceMetrics = {
  readonly registry: Registry;
  readonly handled: Counter<'consumer' | 'subject'>;
  readonly retried: Counter<'consumer' | 'subject'>;
  readonly deadLettered: Counter<'consumer' | 'reason'>;
  readonly ignored: Counter<'consumer'>;
  /** Own writes the cache never showed, dropped by their fallback (libs/contracts own-writes.ts). */
  readonly ownWritesExpired: Counter<'store'>;
  /** Feed for {@link JetStreamServer}'s `observe` option. */
  readonly observe: OutcomeObserver;
};

/** Subjects carry namespaces and names; label only their first tokens to bound cardinality. */
function subjectLabel(subject: string): string {
  const tokens = subject.split('.');
  // Gateway commands keep their sender and command (`rp.k8s.cmd.planner.patch-status`): a handful of values,
  // and the one figure that says which writes a policy costs. Other subjects stop before names (namespaces
  // are unbounded).
  const kept = tokens[1] === 'k8s' && tokens[2] === 'cmd' ? 5 : 3;
  return tokens.slice(0, kept).join('.');
}

/**
 * How often the event-loop delay histogram of the default metrics samples (`nodejs_eventloop_lag_*`; prom-client's
 * default is 10 ms). Its timer wakes an otherwise idle service 100 times a second, about 10 ms of CPU a second per
 * process on the bench machine (docs/performance.md, the idle baseline): more than the rest of an idle service.
 * The histogram records the whole interval between two samples, so an idle service's lag percentiles read
 * about 0.1 s instead of 0.01 s; a loop held longer than that still lengthens them.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** Creates the registry of `service` with default metrics and the message counters. */
export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const handled = new Counter({
    name: 'rp_messages_handled_total',
    help: 'Messages whose handler succeeded and that were acked',
    labelNames: ['consumer', 'subject'] as const,
    registers: [registry],
  });
  const retried = new Counter({
    name: 'rp_messages_failed_total',
    help: 'Handler failures that were nak-ed for a later redelivery',
    labelNames: ['consumer', 'subject'] as const,
    registers: [registry],
  });
  const deadLettered = new Counter({
    name: 'rp_messages_dead_lettered_total',
    help: 'Messages moved to the dead-letter subject, by reason',
    labelNames: ['consumer', 'reason'] as const,
    registers: [registry],
  });
  const ignored = new Counter({
    name: 'rp_messages_ignored_total',
    help: 'Messages acked without a handler (consumer filter wider than the handlers)',
    labelNames: ['consumer'] as const,
    registers: [registry],
  });
  const ownWritesExpired = new Counter({
    name: 'rp_own_writes_expired_total',
    help: 'Own writes dropped after their expiry because the resource cache never showed them, by store',
    labelNames: ['store'] as const,
    registers: [registry],
  });
  const observe = (outcome: MessageOutcome): void => {
    switch (outcome.kind) {
      case 'handled':
        handled.inc({ consumer: outcome.consumer, subject: subjectLabel(outcome.subject) });
        return;
      case 'retried':
        retried.inc({ consumer: outcome.consumer, subject: subjectLabel(outcome.subject) });
        return;
      case 'dead_lettered':
        deadLettered.inc({ consumer: outcome.consumer, reason: outcome.reason });
        return;
      case 'ignored':
        ignored.inc({ consumer: outcome.consumer });
        return;
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  };
  return { registry, handled, retried, deadLettered, ignored, ownWritesExpired, observe };
}
