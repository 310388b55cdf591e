// Owns the access-scheduler's long-lived parts: the resource cache (access policies, requests, target
// policies, plans, notifications ConfigMaps), the BullMQ timers and notification deliveries, the dashboard, the
// metrics and the loop, with the periodic rebuild.
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  k8sCommandContract,
  k8sCommandSubject,
  ResourceCache,
  type K8sCommandV1,
  SecretAccessClient,
  type ScopedExecuteResultV1,
} from '@rolepolicy/contracts';
import { NOTIFICATIONS_CONFIGMAP } from '@rolepolicy/policy';
import {
  AUDIT_LOG,
  DECISIONS_NOT_REPORTED,
  NO_AUDIT,
  DecisionAdmissionReport,
  NATS_CONNECTION,
  SERVICE_CONFIG,
  SERVICE_METRICS,
  type AuditSink,
  type ServiceMetrics,
} from '@rolepolicy/runtime';
import type { AccessSchedulerConfig } from '../config.js';
import { mountDashboard, type MountPoint } from './dashboard.js';
import { schedulerMetrics, type SchedulerMetrics } from './metrics.js';
import { AccessScheduler } from './reconciler.js';
import { deliver } from '../notifications/delivery.js';
import { notificationMetrics, type NotificationMetrics } from '../notifications/metrics.js';
import { Notifier } from '../notifications/notifier.js';
import { sinkOf } from '../notifications/sinks.js';
import { AccessTimers, NotificationDeliveries } from './queues.js';

const START_RETRY_MS = 500;

/** Starts the cache, timers and loop in the background (the stream may not exist yet at boot). */
@Injectable()
export class SchedulerHost implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('AccessScheduler');
  private readonly timers: AccessTimers;
  private readonly metrics: SchedulerMetrics;
  private readonly deliveries: NotificationDeliveries;
  private readonly notificationMetrics: NotificationMetrics;
  private notifier: Notifier | undefined;
  private cache: ResourceCache | undefined;
  /** Whether decisions are authenticated (ADR 0026): logged, a gauge, and the Ready reason of waiting requests. */
  private decisions: DecisionAdmissionReport | undefined;
  private scheduler: AccessScheduler | undefined;
  private rebuildTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
    @Inject(SERVICE_CONFIG) private readonly config: AccessSchedulerConfig,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
    @Inject(SERVICE_METRICS) private readonly serviceMetrics: ServiceMetrics,
    @Inject(HttpAdapterHost) private readonly http: HttpAdapterHost,
    @Optional() @Inject(AUDIT_LOG) private readonly audit: AuditSink = NO_AUDIT,
  ) {
    this.timers = new AccessTimers({
      redisUrl: config.REDIS_URL,
      prefix: config.ACCESS_SCHEDULER_REDIS_PREFIX,
      onFire: async (job, lateMs) => {
        this.metrics.timerLatency.observe({ queue: job.kind }, lateMs / 1000);
        await this.scheduler?.onTimer(job);
      },
      log: this.logger,
    });
    this.metrics = schedulerMetrics(serviceMetrics.registry, () => this.timers);
    this.notificationMetrics = notificationMetrics(serviceMetrics.registry);
    const maxAgeMs = config.NOTIFICATIONS_MAX_AGE * 1000;
    const notifications = new Logger('Notifications');
    const secrets = new SecretAccessClient(nats);
    this.deliveries = new NotificationDeliveries({
      redisUrl: config.REDIS_URL,
      prefix: config.ACCESS_SCHEDULER_REDIS_PREFIX,
      attempts: config.NOTIFICATIONS_RETRY_ATTEMPTS,
      backoffMs: config.NOTIFICATIONS_RETRY_BACKOFF_MS,
      keepDeliveredMs: maxAgeMs + 3_600_000,
      deliver: async (job) => {
        if (this.cache === undefined) throw new Error('the access-scheduler is still starting');
        const cache = this.cache;
        await deliver(job, {
          configMap: (ns, name) => cache.get('configmap', ns, name),
          secrets,
          timeoutMs: config.NOTIFICATIONS_TIMEOUT_MS,
        });
      },
      onAttempt: (job, outcome) => {
        const type = job.occurrence.type;
        if (outcome.kind === 'delivered') {
          const sink = this.cache?.get('configmap', job.sinkNamespace, NOTIFICATIONS_CONFIGMAP);
          const parsed = sink === undefined ? undefined : sinkOf(sink);
          const format = parsed?.ok === true ? parsed.sink.format : 'cloudevents';
          this.notificationMetrics.delivered.inc({ type, format });
          this.notificationMetrics.latency.observe(outcome.latencyMs / 1000);
          return;
        }
        this.notificationMetrics.failed.inc({ type });
        if (outcome.deadLettered) {
          this.notificationMetrics.deadLettered.inc({ type });
          notifications.warn(
            `notification ${job.occurrence.id} (${type}) dead-lettered after its last attempt: ${outcome.error.message}`,
          );
        } else
          notifications.debug(
            `notification ${job.occurrence.id} (${type}) attempt failed: ${outcome.error.message}`,
          );
      },
      log: notifications,
    });
  }

  onModuleInit(): void {
    const app = this.http.httpAdapter?.getInstance() as MountPoint | undefined;
    if (app === undefined) return;
    mountDashboard(
      app,
      this.config.ACCESS_SCHEDULER_DASHBOARD_PATH,
      [...Object.values(this.timers.queues), this.deliveries.queue],
      this.config.ACCESS_SCHEDULER_DASHBOARD_READ_ONLY === 'true',
    );
  }

  onApplicationBootstrap(): void {
    if (this.starting !== undefined) return;
    this.starting = this.start();
  }

  private async start(): Promise<void> {
    while (!this.stopped) {
      try {
        const cache = await ResourceCache.start(this.nats, {
          kinds: [
            'ephemeralaccesspolicy',
            'ephemeralaccessrequest',
            'postgrespolicy',
            'postgrespolicyplan',
            'secret',
            'configmap',
          ],
          logger: this.logger,
        });
        this.cache = cache;
        await cache.ready;
        this.decisions ??= await DecisionAdmissionReport.start(this.nats, {
          registry: this.serviceMetrics.registry,
          log: this.logger,
          onChange: () => this.scheduler?.triggerRequests(),
        });
        await cache
          .refresh()
          .catch((error: Error) =>
            this.logger.warn(`no fresh resync markers (${error.message}); starting from the stream's view`),
          );
        if (this.stopped) return;
        this.scheduler = new AccessScheduler({
          cache,
          publisher: this.publisher,
          secrets: new SecretAccessClient(this.nats),
          limits: {
            maximumDurationSeconds: this.config.EPHEMERAL_ACCESS_MAXIMUM_DURATION,
            maxPendingTtlSeconds: this.config.EPHEMERAL_ACCESS_MAX_PENDING_TTL,
            privilegedNamespaces: this.config.EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES,
          },
          schedule: (job, now) => this.timers.schedule(job, now),
          log: this.logger,
          // One audit record per transition (docs/audit.md): stdout `audit` and OpenTelemetry logs.
          audit: (record) => this.audit.write(record),
          observeRevocationLag: (seconds) => this.metrics.revocationLag.observe(seconds),
          observeRevokeDispatch: (seconds) => this.metrics.revokeDispatch.observe(seconds),
          decisionsUnauthenticated: () => !(this.decisions?.state ?? DECISIONS_NOT_REPORTED).authenticated,
          onOwnWriteExpired: (store) => this.serviceMetrics.ownWritesExpired.inc({ store }),
        });
        this.timers.start();
        this.scheduler.start();
        this.deliveries.start();
        this.notifier = new Notifier({
          cache,
          enqueue: (job) => this.deliveries.add(job),
          clusterNamespace: this.config.NOTIFICATIONS_NAMESPACE,
          maxAgeMs: this.config.NOTIFICATIONS_MAX_AGE * 1000,
          log: new Logger('Notifications'),
          reportInvalid: (configMap, message) => this.recordSinkEvent(configMap, message),
          observeSinks: (valid, invalid) => {
            this.notificationMetrics.sinks.set({ state: 'valid' }, valid);
            this.notificationMetrics.sinks.set({ state: 'invalid' }, invalid);
          },
        });
        this.notifier.start();
        this.rebuildTimer = setInterval(
          () => this.rebuild(),
          this.config.ACCESS_SCHEDULER_REBUILD_INTERVAL_MS,
        );
        this.rebuildTimer.unref();
        this.logger.log(
          `following access policies and requests; timers rebuilt every ${this.config.ACCESS_SCHEDULER_REBUILD_INTERVAL_MS} ms`,
        );
        return;
      } catch (error) {
        await this.cache?.stop();
        this.cache = undefined;
        this.logger.warn(`resource cache not ready (${(error as Error).message}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, START_RETRY_MS));
      }
    }
  }

  /** Re-adds every timer and reconciles every request and access policy (Redis holds no truth). */
  private rebuild(): void {
    this.notifier?.rebuild();
    const phases = this.scheduler?.rebuild();
    if (phases === undefined) return;
    this.metrics.transitions.reset();
    for (const [phase, count] of Object.entries(phases)) this.metrics.transitions.set({ phase }, count);
  }

  /** A Warning Event on an invalid notifications ConfigMap (`kubectl describe configmap` shows it). */
  private async recordSinkEvent(
    configMap: { metadata: { namespace: string; uid?: string; resourceVersion?: string } },
    message: string,
  ): Promise<void> {
    const { namespace, uid, resourceVersion } = configMap.metadata;
    const command: K8sCommandV1 = {
      v: 1,
      command: 'record-event',
      target: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace,
        name: NOTIFICATIONS_CONFIGMAP,
        ...(uid === undefined ? {} : { uid }),
      },
      event: {
        type: 'Warning',
        reason: 'InvalidNotificationSink',
        message: message.length <= 1024 ? message : `${message.slice(0, 1023)}…`,
        action: 'ValidateNotificationSink',
        component: 'rolepolicy-access-scheduler',
      },
      idempotencyKey: `access-scheduler/notifications/${namespace}/${resourceVersion ?? ''}`,
      orderingKey: `ConfigMap/${namespace}/${NOTIFICATIONS_CONFIGMAP}`,
    };
    await this.publisher.publish(
      k8sCommandContract,
      k8sCommandSubject('access-scheduler', 'record-event'),
      command,
      command.idempotencyKey,
    );
  }

  /** Records a scoped execution result; throws (redelivery) while the loop is not running yet. */
  async handleResult(result: ScopedExecuteResultV1): Promise<void> {
    if (this.scheduler === undefined) throw new Error('the access-scheduler is still starting');
    await this.scheduler.handleResult(result);
  }

  /** The loop (tests). */
  get loop(): AccessScheduler | undefined {
    return this.scheduler;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.rebuildTimer);
    // A start still waiting for the cache ends now (a stopped cache rejects its readiness).
    if (this.scheduler === undefined) await this.cache?.stop();
    await this.starting;
    this.notifier?.stop();
    await this.scheduler?.stop();
    await this.timers.stop();
    await this.deliveries.stop();
    await this.decisions?.stop();
    await this.cache?.stop();
  }
}
