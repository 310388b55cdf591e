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
import { JetStreamPublisher, ResourceCache, type ExecuteResultV1 } from '@rolepolicy/contracts';
import { NATS_CONNECTION, SERVICE_CONFIG } from '@rolepolicy/runtime';
import type { PlannerConfig } from '../config.js';
import { DEFAULT_LIFECYCLE_SETTINGS } from '../lifecycle/index.js';
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
  ) {}

  onApplicationBootstrap(): void {
    // Idempotent: a hook run twice (HTTP app and microservice init) must not start a second loop.
    if (this.starting !== undefined) return;
    this.starting = this.start();
  }

  private async start(): Promise<void> {
    while (!this.stopped) {
      try {
        const cache = await ResourceCache.start(this.nats, {
          kinds: ['postgrespolicy', 'postgrespolicyplan', 'secret'],
          logger: this.logger,
        });
        this.cache = cache;
        await cache.ready;
        if (this.stopped) return;
        this.reconciler = new Reconciler({
          cache,
          nats: this.nats,
          publisher: this.publisher,
          settings: {
            ...DEFAULT_LIFECYCLE_SETTINGS,
            retention: {
              applied: this.config.PLANNER_RETAIN_APPLIED,
              decided: this.config.PLANNER_RETAIN_DECIDED,
              superseded: this.config.PLANNER_RETAIN_SUPERSEDED,
            },
            failedRetryWindowSeconds: this.config.PLANNER_FAILED_RETRY_WINDOW_SECONDS,
            stuckApplyingSeconds: this.config.PLANNER_STUCK_APPLYING_SECONDS,
          },
          inspectTimeoutMs: this.config.PLANNER_INSPECT_TIMEOUT_MS,
          secretRetryMs: this.config.PLANNER_SECRET_RETRY_MS,
          log: this.logger,
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
