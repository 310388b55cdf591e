// JetStream figures on /metrics, read from the server at scrape time: for each durable consumer the
// service binds, the messages not yet delivered (pending), delivered but unacknowledged (ack pending) and
// redelivered; and the dead letters waiting in the dead-letter stream. KEDA's scaler reads the same
// pending count from the NATS monitoring endpoint; the dashboards and alerts read these.
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Counter, Gauge, type Registry } from 'prom-client';

/** One durable consumer to report on. */
export type ReportedConsumer = { readonly stream: string; readonly durable: string };

/** What {@link registerJetStreamMetrics} reads. */
export type JetStreamMetricsOptions = {
  readonly consumers: readonly ReportedConsumer[];
  /** Stream whose message count is the number of dead letters (absent: not reported). */
  readonly deadLetterStream?: string;
  /** How long one scrape waits for the server per request (default 2000 ms). */
  readonly timeoutMs?: number;
  /** Scrapes within this many ms share one reading (default 1000). */
  readonly cacheMs?: number;
};

type Reading = {
  readonly consumers: readonly {
    readonly stream: string;
    readonly consumer: string;
    readonly pending: number;
    readonly ackPending: number;
    readonly redelivered: number;
  }[];
  readonly deadLetters: number | undefined;
};

/** The figures of one scrape; each one the server does not answer for is left out and reported to `failed`. */
async function readFigures(
  jsm: JetStreamManager,
  options: JetStreamMetricsOptions,
  failed: () => void,
): Promise<Reading> {
  const consumers: Reading['consumers'][number][] = [];
  for (const { stream, durable } of options.consumers) {
    try {
      const info = await jsm.consumers.info(stream, durable);
      consumers.push({
        stream,
        consumer: durable,
        pending: info.num_pending,
        ackPending: info.num_ack_pending,
        redelivered: info.num_redelivered,
      });
    } catch {
      failed();
    }
  }
  let deadLetters: number | undefined;
  if (options.deadLetterStream) {
    try {
      deadLetters = (await jsm.streams.info(options.deadLetterStream)).state.messages;
    } catch {
      failed();
    }
  }
  return { consumers, deadLetters };
}

/**
 * Registers the JetStream gauges on `registry`. A consumer or stream the server does not answer for
 * (missing, no permission, NATS down) is left out of that scrape and counted in
 * `rp_jetstream_scrape_errors_total`, so a stale figure is never shown as current.
 */
export function registerJetStreamMetrics(
  registry: Registry,
  nats: NatsConnection,
  options: JetStreamMetricsOptions,
): void {
  const timeout = options.timeoutMs ?? 2000;
  const cacheMs = options.cacheMs ?? 1000;
  let manager: Promise<JetStreamManager> | undefined;
  let cached: { at: number; reading: Promise<Reading> } | undefined;

  const errors = new Counter({
    name: 'rp_jetstream_scrape_errors_total',
    help: 'JetStream figures the server did not answer for at scrape time',
    registers: [registry],
  });

  const read = async (): Promise<Reading> => {
    manager ??= jetstreamManager(nats, { timeout, checkAPI: false });
    let jsm: JetStreamManager;
    try {
      jsm = await manager;
    } catch {
      manager = undefined;
      errors.inc(options.consumers.length + (options.deadLetterStream ? 1 : 0));
      return { consumers: [], deadLetters: undefined };
    }
    return readFigures(jsm, options, () => errors.inc());
  };

  const reading = (): Promise<Reading> => {
    const now = Date.now();
    if (!cached || now - cached.at >= cacheMs) cached = { at: now, reading: read() };
    return cached.reading;
  };

  const consumerGauge = (spec: {
    name: string;
    help: string;
    pick: (c: Reading['consumers'][number]) => number;
  }) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ['stream', 'consumer'] as const,
      registers: [registry],
      async collect() {
        const { consumers } = await reading();
        this.reset();
        for (const c of consumers) this.set({ stream: c.stream, consumer: c.consumer }, spec.pick(c));
      },
    });

  consumerGauge({
    name: 'rp_jetstream_consumer_pending_messages',
    help: 'Messages in the stream not yet delivered to the durable consumer (its backlog)',
    pick: (c) => c.pending,
  });
  consumerGauge({
    name: 'rp_jetstream_consumer_ack_pending_messages',
    help: 'Messages delivered to the durable consumer and not yet acknowledged (in progress)',
    pick: (c) => c.ackPending,
  });
  consumerGauge({
    name: 'rp_jetstream_consumer_redelivered_messages',
    help: 'Unacknowledged messages of the durable consumer that were delivered more than once',
    pick: (c) => c.redelivered,
  });
  if (options.deadLetterStream) {
    new Gauge({
      name: 'rp_jetstream_dead_letter_messages',
      help: 'Dead letters kept in the dead-letter stream',
      labelNames: ['stream'] as const,
      registers: [registry],
      async collect() {
        const { deadLetters } = await reading();
        this.reset();
        if (deadLetters !== undefined) this.set({ stream: options.deadLetterStream! }, deadLetters);
      },
    });
  }
}
