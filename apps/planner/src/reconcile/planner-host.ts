// Owns the planner's long-lived parts: the resource cache (policies, plans, Secrets from RP_RESOURCES),
// kept warm on every replica, and the leader election (ADR 0011). Only the leader runs a reconciler and
// pulls execution results; a standby follows the stream and sends nothing. On taking the lease the new
// leader waits for the previous leader's commands to drain, resyncs, and reconciles every policy once
// (converged policies by fingerprint when this replica recorded them in an earlier term).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  ResourceCache,
  SecretAccessClient,
  bindLeaseStream,
  kvLeaseStore,
  openLeaseBucket,
} from '@rolepolicy/contracts';
import { Counter, Gauge, Histogram } from 'prom-client';
import {
  AUDIT_LOG,
  DECISIONS_NOT_REPORTED,
  DecisionAdmissionReport,
  NATS_CONNECTION,
  SERVICE_CONFIG,
  SERVICE_METRICS,
  type AuditSink,
  type ServiceMetrics,
} from '@rolepolicy/runtime';
import type { PlannerConfig } from '../config.js';
import { DEFAULT_LIFECYCLE_SETTINGS } from '@rolepolicy/plan-lifecycle';
import { ElectionLoop } from '../leadership/election-loop.js';
import { Elector, timingProblem, type ElectionTiming, type LeaderTerm } from '../leadership/elector.js';
import { drainEarlierCommands, lastCommandSeq } from '../leadership/handover.js';
import { leaderPublisher, PLANNER_LEASE } from '../leadership/leader-publisher.js';
import { LeaderResults } from '../leadership/leader-results.js';
import { ConvergedMemo } from './converged-memo.js';
import { registerPendingApprovalMetrics } from './pending-approval-metrics.js';
import { Reconciler } from './reconciler.js';

const START_RETRY_MS = 500;

/** Starts the cache and the election in the background (the stream may not exist yet at boot). */
@Injectable()
export class PlannerHost implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Planner');
  private cache: ResourceCache | undefined;
  /** Whether decisions are authenticated (ADR 0026): logged, a gauge, and the reason on waiting plans. */
  private decisions: DecisionAdmissionReport | undefined;
  private reconciler: Reconciler | undefined;
  private elector: Elector | undefined;
  private loop: ElectionLoop | undefined;
  private readonly results: LeaderResults;
  /** Term changes run one after the other, outside the election's rounds (renewals never wait on them). */
  private transition: Promise<void> = Promise.resolve();
  private histogram: Histogram<'decision'> | undefined;
  private appliedSnapshotsUsed: Counter | undefined;
  private appliedSnapshotsUnused: Counter<'reason'> | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  /**
   * Converged policies confirmed by fingerprint, kept across this replica's terms: a term change no longer
   * re-inspects every policy in full (converged-memo.ts says why that is safe).
   */
  private readonly converged: ConvergedMemo;
  /** The identity written to the lease. */
  readonly identity: string;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
    @Inject(SERVICE_CONFIG) private readonly config: PlannerConfig,
    @Inject(JetStreamPublisher) private readonly publisher: JetStreamPublisher,
    @Inject(SERVICE_METRICS) private readonly metrics: ServiceMetrics,
    @Optional() @Inject(AUDIT_LOG) private readonly audit: AuditSink | null = null,
  ) {
    const problem = timingProblem(this.timing());
    if (problem !== null) {
      throw new Error(
        `PLANNER_LEASE_DURATION_MS, PLANNER_LEASE_RENEW_DEADLINE_MS, PLANNER_LEASE_RETRY_MS: ${problem}`,
      );
    }
    this.identity = config.PLANNER_IDENTITY || `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.results = new LeaderResults(nats, metrics.observe, config.PLANNER_CONCURRENCY);
    this.converged = new ConvergedMemo({
      fullEveryPasses: config.PLANNER_FULL_INSPECTION_EVERY,
      fullAfterMs: config.PLANNER_FULL_INSPECTION_AFTER_SECONDS * 1000,
    });
  }

  onApplicationBootstrap(): void {
    // Idempotent: a hook run twice (HTTP app and microservice init) must not start a second loop.
    if (this.starting !== undefined) return;
    this.starting = this.start();
  }

  private timing(): ElectionTiming {
    return {
      leaseDurationMs: this.config.PLANNER_LEASE_DURATION_MS,
      renewDeadlineMs: this.config.PLANNER_LEASE_RENEW_DEADLINE_MS,
      retryMs: this.config.PLANNER_LEASE_RETRY_MS,
    };
  }

  /** Whether this replica leads right now. */
  isLeader(): boolean {
    return this.elector?.isLeader() ?? false;
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

  private registerMetrics(): void {
    this.histogram = this.reconcileHistogram();
    this.appliedSnapshotsUsed = new Counter({
      name: 'rp_planner_applied_snapshot_verifications_total',
      help: 'Passes that verified convergence from an executor post-apply snapshot instead of an inspection (ADR 0017)',
      registers: [this.metrics.registry],
    });
    this.appliedSnapshotsUnused = new Counter({
      name: 'rp_planner_applied_snapshot_unused_total',
      help: 'Passes after an Applied result that inspected instead, by reason (not_received, inputs_changed, expired, other_policy, other_plan, other_target, other_scope, changes_left)',
      labelNames: ['reason'],
      registers: [this.metrics.registry],
    });
    registerPendingApprovalMetrics(this.metrics.registry, () => this.cache?.list('postgrespolicyplan') ?? []);
    const isLeader = (): boolean => this.isLeader();
    // Dashboards show which replica leads; exactly one series per cluster should read 1.
    new Gauge({
      name: 'rp_planner_leader',
      help: '1 while this planner replica holds the leader lease (rp-leaders KV) and may send commands, else 0',
      registers: [this.metrics.registry],
      collect() {
        this.set(isLeader() ? 1 : 0);
      },
    });
  }

  private async start(): Promise<void> {
    this.registerMetrics();
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
        this.decisions ??= await DecisionAdmissionReport.start(this.nats, {
          registry: this.metrics.registry,
          log: this.logger,
          onChange: () => this.reconciler?.triggerAll(),
        });
        // The gateway creates the lease bucket with the topology; the planner may not (ADR 0022).
        await bindLeaseStream(this.nats, { waiting: (message) => this.logger.warn(message) });
        const store = kvLeaseStore(await openLeaseBucket(this.nats), PLANNER_LEASE);
        if (this.stopped) return;
        const now = (): number => performance.now();
        const timing = this.timing();
        this.elector = new Elector({
          identity: this.identity,
          store,
          timing,
          now,
          onStartedLeading: (term) => {
            this.logger.log(`${this.identity} leads (epoch ${term.epoch})`);
            this.transition = this.transition.then(() => this.lead(term)).catch(this.transitionFailed);
          },
          onStoppedLeading: (term, why) => {
            this.logger.warn(`${this.identity} stopped leading (epoch ${term.epoch}): ${why}`);
            this.transition = this.transition.then(() => this.follow()).catch(this.transitionFailed);
          },
          handoverSeq: () => lastCommandSeq(this.nats),
          onError: (error) =>
            this.logger.warn(`leader lease: ${error instanceof Error ? error.message : String(error)}`),
        });
        this.loop = new ElectionLoop(this.elector, timing.retryMs, now);
        this.loop.start();
        this.logger.log(`following policies, plans and Secrets; ${this.identity} joined the election`);
        return;
      } catch (error) {
        await this.cache?.stop();
        this.cache = undefined;
        this.logger.warn(`resource cache not ready (${(error as Error).message}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, START_RETRY_MS));
      }
    }
  }

  /** A failed term change never blocks the next one (the chain stays resolved). */
  private readonly transitionFailed = (error: unknown): void =>
    this.logger.error(`leadership change failed: ${error instanceof Error ? error.message : String(error)}`);

  /** A term begins: drain the previous leader's commands, resync, reconcile everything, take results. */
  private async lead(term: LeaderTerm): Promise<void> {
    const cache = this.cache;
    const elector = this.elector;
    if (cache === undefined || elector === undefined) return;
    const inTerm = (): boolean => !this.stopped && elector.term()?.epoch === term.epoch;
    if (!inTerm()) return;
    try {
      const drained = await drainEarlierCommands(this.nats, term.handoverSeq ?? 0, {
        timeoutMs: this.config.PLANNER_LEASE_DURATION_MS,
        cancelled: () => !inTerm(),
      });
      if (!drained && inTerm()) {
        this.logger.warn("the previous leader's commands still queued after one lease duration; going on");
      }
    } catch (error) {
      this.logger.warn(`command queue not readable (${(error as Error).message}); the fence still applies`);
    }
    // Fresh markers first: the stream may still hold objects of an API that is gone (ADR 0005).
    await cache
      .refresh()
      .catch((error: Error) =>
        this.logger.warn(`no fresh resync markers (${error.message}); starting from the stream's view`),
      );
    if (!inTerm()) return;
    const histogram = this.histogram;
    // The memo kept from an earlier term: policies deleted meanwhile are not passed again (converged-memo.ts).
    this.converged.retain((key) => {
      const [namespace = '', name = ''] = key.split('/');
      return cache.get('postgrespolicy', namespace, name) !== undefined;
    });
    const reconciler = new Reconciler({
      cache,
      nats: this.nats,
      publisher: leaderPublisher(this.publisher, () => elector.term(), term),
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
      passConcurrency: this.config.PLANNER_CONCURRENCY,
      inspectSealKey: this.config.INSPECT_SEAL_PUBLIC_KEY,
      converged: this.converged,
      candidateSettings: {
        ttlSeconds: this.config.PLANNER_CANDIDATE_TTL_SECONDS,
        budget: this.config.PLANNER_CANDIDATE_BUDGET,
        retainTerminal: this.config.PLANNER_CANDIDATE_RETAIN_TERMINAL,
      },
      log: this.logger,
      ...(this.audit ? { audit: this.audit } : {}),
      ...(histogram ? { observe: (decision, seconds) => histogram.observe({ decision }, seconds) } : {}),
      onAppliedSnapshot: (outcome) =>
        outcome === 'verified'
          ? this.appliedSnapshotsUsed?.inc()
          : this.appliedSnapshotsUnused?.inc({ reason: outcome }),
      decisions: () => this.decisions?.state ?? DECISIONS_NOT_REPORTED,
      onOwnWriteExpired: (store) => this.metrics.ownWritesExpired.inc({ store }),
    });
    this.reconciler = reconciler;
    reconciler.start();
    try {
      await this.results.start((result) => reconciler.handleResult(result));
    } catch (error) {
      this.logger.error(`execution results not consumed (${(error as Error).message}); stepping down`);
      await this.elector?.release();
      return;
    }
    this.logger.log(`reconciling as leader (epoch ${term.epoch})`);
  }

  /** A term ended: stop taking results and let running passes finish (they can send nothing now). */
  private async follow(): Promise<void> {
    await this.results.stop();
    await this.reconciler?.stop();
    this.reconciler = undefined;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    // A start still waiting for the cache ends now (a stopped cache rejects its readiness).
    if (this.loop === undefined) await this.cache?.stop();
    await this.starting;
    // Releasing ends the term first (nothing is sent after it), then hands the lease over.
    await this.loop?.stop();
    await this.transition;
    await this.follow();
    await this.decisions?.stop();
    await this.cache?.stop();
  }
}
