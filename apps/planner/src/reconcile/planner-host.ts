// Owns the planner's long-lived parts: the resource cache (policies, plans, Secrets from RP_RESOURCES)
// and the reconciler, started after boot and stopped before the runtime closes NATS.
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  ResourceCache,
  SecretAccessClient,
  type ExecuteResultV1,
} from '@rolepolicy/contracts';
import { Histogram } from 'prom-client';
import { NATS_CONNECTION, SERVICE_CONFIG, SERVICE_METRICS, type ServiceMetrics } from '@rolepolicy/runtime';
import type { PlannerConfig } from '../config.js';
import { DEFAULT_LIFECYCLE_SETTINGS } from '../lifecycle/index.js';
import { registerPendingApprovalMetrics } from './pending-approval-metrics.js';
import { Reconciler } from './reconciler.js';

const START_RETRY_MS = 500;

/** Starts the cache and the reconcile loop in the background (the stream may not exist yet at boot). */
@Injectable()
export class PlannerHost implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Planner');
  private cache: ResourceCache | undefined;
  private reconciler: Reconciler | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
    @Inject(SERVICE_CONFIG) private readonly config: PlannerConfig,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
    @Inject(SERVICE_METRICS) private readonly metrics: ServiceMetrics,
  ) {}

  onApplicationBootstrap(): void {
    // Idempotent: a hook run twice (HTTP app and microservice init) must not start a second loop.
    if (this.starting !== undefined) return;
    this.starting = this.start();
  }

  /** `rp_planner_reconcile_seconds{decision}`: one pass, from its start to the last command sent. */
  private reconcileHistogram(): Histogram<'decision'> {
    return new Histogram({
      name: 'rp_planner_reconcile_seconds',
      help: 'Duration of one reconcile pass (resolve, inspect, plan, decide, send commands) by decision kind',
      labelNames: ['decision'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.metrics.registry],
    });
  }

  private async start(): Promise<void> {
    const histogram = this.reconcileHistogram();
    registerPendingApprovalMetrics(this.metrics.registry, () => this.cache?.list('postgrespolicyplan') ?? []);
    while (!this.stopped) {
      try {
        const cache = await ResourceCache.start(this.nats, {
          kinds: [
            'postgrespolicy',
            'postgrespolicycandidate',
            'postgrespolicyplan',
            'secret',
            'ephemeralaccessrequest',
          ],
          logger: this.logger,
        });
        this.cache = cache;
        await cache.ready;
        // Fresh markers first: the stream may still hold objects of an API that is gone (ADR 0005).
        await cache
          .refresh()
          .catch((error: Error) =>
            this.logger.warn(`no fresh resync markers (${error.message}); starting from the stream's view`),
          );
        if (this.stopped) return;
        this.reconciler = new Reconciler({
          cache,
          nats: this.nats,
          publisher: this.publisher,
          secrets: new SecretAccessClient(this.nats),
          settings: {
            ...DEFAULT_LIFECYCLE_SETTINGS,
            retention: {
              applied: this.config.PLANNER_RETAIN_APPLIED,
              decided: this.config.PLANNER_RETAIN_DECIDED,
              superseded: this.config.PLANNER_RETAIN_SUPERSEDED,
              minAgeSeconds: this.config.PLANNER_RETAIN_MIN_AGE_SECONDS,
            },
            failedRetryWindowSeconds: this.config.PLANNER_FAILED_RETRY_WINDOW_SECONDS,
            stuckApplyingSeconds: this.config.PLANNER_STUCK_APPLYING_SECONDS,
          },
          inspectTimeoutMs: this.config.PLANNER_INSPECT_TIMEOUT_MS,
          convergedMemo: {
            fullEveryPasses: this.config.PLANNER_FULL_INSPECTION_EVERY,
            fullAfterMs: this.config.PLANNER_FULL_INSPECTION_AFTER_SECONDS * 1000,
          },
          candidateSettings: {
            ttlSeconds: this.config.PLANNER_CANDIDATE_TTL_SECONDS,
            budget: this.config.PLANNER_CANDIDATE_BUDGET,
            retainTerminal: this.config.PLANNER_CANDIDATE_RETAIN_TERMINAL,
          },
          log: this.logger,
          observe: (decision, seconds) => histogram.observe({ decision }, seconds),
        });
        this.reconciler.start();
        this.logger.log('following policies, plans and Secrets');
        return;
      } catch (error) {
        await this.cache?.stop();
        this.cache = undefined;
        this.logger.warn(`resource cache not ready (${(error as Error).message}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, START_RETRY_MS));
      }
    }
  }

  /** Records an execution result; throws (redelivery) while the loop is not running yet. */
  async handleResult(result: ExecuteResultV1): Promise<void> {
    if (this.reconciler === undefined) throw new Error('the planner is still starting');
    await this.reconciler.handleResult(result);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.starting;
    await this.reconciler?.stop();
    await this.cache?.stop();
  }
}
