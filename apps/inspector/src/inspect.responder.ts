// Serves snapshot requests on core NATS (request/reply, queue group `inspector` so replicas split the
// work); closes the target pools at shutdown. Readiness stays NATS-only: targets are per-request.
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { databaseTlsFromConfig, workloadIdentityFromConfig } from '@rolepolicy/catalog';
import { SPAN_ATTRIBUTES, SpanKind, contextFromHeaders, inSpan, tracingActive } from '@rolepolicy/contracts';
import {
  NATS_CONNECTION,
  SERVICE_CONFIG,
  SERVICE_METRICS,
  Slots,
  type ServiceMetrics,
} from '@rolepolicy/runtime';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { InspectorConfig } from './config.js';
import { handleInspectRequest, type InspectDeps } from './inspect.handler.js';
import { SnapshotStore } from './snapshot-store.js';
import { TargetPools } from './target-pools.js';

/** Queue group shared by inspector replicas: each request reaches exactly one of them. */
export const INSPECTOR_QUEUE = 'inspector';

/** Subscribes to the request subject at bootstrap and answers each request. */
@Injectable()
export class InspectResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('inspector');
  private readonly deps: InspectDeps;
  private subscription: Subscription | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Inspections at once (INSPECT_CONCURRENCY): each holds connections to its target, and a fleet's planner
   * asks for hundreds at once; unbounded, they exhausted the server's max_connections. Taken once the target's
   * server has room (INSPECT_SERVER_SESSIONS, `TargetPools`), so a busy server's waiters hold none of them.
   */
  private readonly slots: Slots;
  private readonly requests: Counter<'outcome'>;
  private readonly duration: Histogram<'outcome'>;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
    @Inject(SERVICE_CONFIG) private readonly config: InspectorConfig,
    @Inject(SERVICE_METRICS) metrics: ServiceMetrics,
  ) {
    this.slots = new Slots(config.INSPECT_CONCURRENCY);
    const registers = [metrics.registry];
    const serverWait = new Histogram({
      name: 'rp_inspect_server_wait_seconds',
      help: 'Time an inspection waited for room on its PostgreSQL server (INSPECT_SERVER_SESSIONS)',
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const pools = new TargetPools(
      config.INSPECT_MAX_TARGET_POOLS,
      undefined,
      workloadIdentityFromConfig(config),
      databaseTlsFromConfig(config),
      {
        sessions: config.INSPECT_SERVER_SESSIONS,
        admit: (task) => this.slots.run(task),
        observeWait: (ms) => serverWait.observe(ms / 1000),
      },
    );
    this.deps = {
      pools,
      store: new SnapshotStore(nats, config.INSPECT_OBJECT_BUCKET),
      inlineMaxBytes: config.INSPECT_INLINE_MAX_BYTES,
      sealKeys: config.INSPECT_SEAL_PRIVATE_KEY,
    };
    this.requests = new Counter({
      name: 'rp_inspect_requests_total',
      help: 'Snapshot requests answered, by outcome (inline, object, unchanged, transient, permanent)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.duration = new Histogram({
      name: 'rp_inspect_duration_seconds',
      help: 'Time from request to reply, by outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    new Gauge({
      name: 'rp_inspect_target_pools',
      help: 'Target connection pools currently open',
      registers,
      collect() {
        this.set(pools.size);
      },
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    // Like the streams: the gateway creates the bucket, the inspector waits for it (ADR 0022).
    await this.deps.store.bind({ waiting: (message) => this.logger.warn(message) });
    this.subscription = this.nats.subscribe(this.config.INSPECT_REQUEST_SUBJECT, {
      queue: INSPECTOR_QUEUE,
      callback: (error, msg) => {
        if (error) {
          this.logger.warn(`subscription error: ${error.message}`);
          return;
        }
        this.track(this.answer(msg));
      },
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    await Promise.allSettled([...this.inFlight]);
    await this.deps.pools.close();
  }

  private async answer(msg: Msg): Promise<void> {
    if (!tracingActive()) {
      await this.answerNow(msg);
      return;
    }
    await inSpan(
      'inspector read',
      {
        kind: SpanKind.SERVER,
        parent: contextFromHeaders(msg.headers),
        attributes: {
          [SPAN_ATTRIBUTES.service]: 'inspector',
          [SPAN_ATTRIBUTES.messagingSystem]: 'nats',
          [SPAN_ATTRIBUTES.messagingDestination]: msg.subject,
        },
      },
      async (span) => {
        const outcome = await this.answerNow(msg);
        span?.setAttribute(SPAN_ATTRIBUTES.outcome, outcome);
      },
    );
  }

  private async answerNow(msg: Msg): Promise<string> {
    const started = performance.now();
    // The server's room and then an INSPECT_CONCURRENCY slot are waited for around the database work only.
    const { bytes, outcome } = await handleInspectRequest(msg.data, this.deps);
    const elapsedMs = performance.now() - started;
    this.requests.inc({ outcome });
    this.duration.observe({ outcome }, elapsedMs / 1000);
    // Log outcome and timing only: the request carries connection secrets and the reply catalog data.
    this.logger.debug(
      `inspect request answered (${outcome}) in ${Math.round(elapsedMs)} ms, ${bytes.byteLength} bytes`,
    );
    if (!msg.respond(bytes)) this.logger.warn('inspect request without a reply subject ignored');
    return outcome;
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => {
        // handleInspectRequest never throws; this is a reply that could not be sent.
        this.logger.warn(`inspect reply failed: ${error instanceof Error ? error.name : 'error'}`);
      })
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}
