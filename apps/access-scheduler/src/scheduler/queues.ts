// The scheduler's queues on BullMQ (the only module importing it): approval deadlines and access expiry as
// delayed jobs with deterministic ids, and notification deliveries (retried with backoff, dead-lettered in the
// failed state). Redis holds no truth: timers are re-added from resource state on each rebuild, a timer only
// wakes a reconcile, and notifications are derived again from the objects (their ids collapse duplicates).
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Occurrence } from '@rolepolicy/policy';

/** Which deadline a timer stands for. */
export type TimerKind = 'approval' | 'expiry';

/** A timer's job data: where the request is, and when it is due. No secret, no status. */
export interface TimerJob {
  readonly kind: TimerKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** Deadline in epoch milliseconds. */
  readonly at: number;
}

/** Queue names, one per timer kind (the dashboard and the metrics show them apart). */
export const QUEUE_NAMES: Readonly<Record<TimerKind, string>> = {
  approval: 'ephemeral-approval-expiry',
  expiry: 'ephemeral-access-expiry',
};

/**
 * The deterministic job id of a timer: the same request and deadline always give the same id, so a
 * rebuild re-adding it is a no-op while the job exists. BullMQ ids cannot contain `:`.
 * @example timerJobId({ kind: 'expiry', uid: '6f1c…', at: 1764072000000, … }) // 'expiry-6f1c…-1764072000000'
 */
export function timerJobId(job: Pick<TimerJob, 'kind' | 'uid' | 'at'>): string {
  return `${job.kind}-${job.uid.replace(/:/g, '')}-${job.at}`;
}

/** Options of {@link AccessTimers}. */
export interface AccessTimersOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  /** Called when a timer is due; the job completes when it resolves. */
  readonly onFire: (job: TimerJob, lateMs: number) => Promise<void>;
  readonly log: { warn(message: string): void };
}

const KINDS: readonly TimerKind[] = ['approval', 'expiry'];
const COUNT_TIMEOUT_MS = 1_000;

/** Job counts of one queue. */
export type QueueCounts = Readonly<Record<'waiting' | 'delayed' | 'active' | 'failed', number>>;

/** BullMQ's counts (keyed by the states asked for) as {@link QueueCounts}; a state it left out counts 0. */
function countsOf(counts: Readonly<Record<string, number>>): QueueCounts {
  return {
    waiting: counts['waiting'] ?? 0,
    delayed: counts['delayed'] ?? 0,
    active: counts['active'] ?? 0,
    failed: counts['failed'] ?? 0,
  };
}

/** The two timer queues and their worker. */
export class AccessTimers {
  private readonly connection: Redis;
  private readonly workerConnection: Redis;
  readonly queues: Readonly<Record<TimerKind, Queue>>;
  private readonly workers: Worker[] = [];
  private lastWarning = 0;

  constructor(private readonly options: AccessTimersOptions) {
    // Adds fail fast while Redis is away (the periodic rebuild re-adds them); the worker waits for it.
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.workerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    for (const c of [this.connection, this.workerConnection])
      c.on('error', (e) => this.warn(`Redis: ${e.message}`));
    const queue = (kind: TimerKind) => {
      const q = new Queue<TimerJob>(QUEUE_NAMES[kind], {
        connection: this.connection,
        prefix: options.prefix,
      });
      q.on('error', (e) => this.warn(`queue ${QUEUE_NAMES[kind]}: ${e.message}`));
      return q;
    };
    this.queues = { approval: queue('approval'), expiry: queue('expiry') };
  }

  /** Starts the workers (one per queue). */
  start(): void {
    for (const kind of KINDS) {
      const worker = new Worker<TimerJob>(
        QUEUE_NAMES[kind],
        async (job: Job<TimerJob>) => {
          const due = job.timestamp + (job.opts.delay ?? 0);
          await this.options.onFire(job.data, Math.max(0, Date.now() - due));
        },
        { connection: this.workerConnection, prefix: this.options.prefix, concurrency: 16 },
      );
      worker.on('error', (e) => this.warn(`worker ${QUEUE_NAMES[kind]}: ${e.message}`));
      this.workers.push(worker);
    }
  }

  /** Adds the timer unless a job with its id exists; never throws (a rebuild adds it again). */
  async schedule(job: TimerJob, now: number): Promise<void> {
    try {
      await this.queues[job.kind].add(`${job.kind}`, job, {
        jobId: timerJobId(job),
        delay: Math.max(0, job.at - now),
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 24 * 3600 },
        attempts: 3,
        backoff: { type: 'exponential', delay: 1_000 },
      });
    } catch (error) {
      this.warn(`timer ${timerJobId(job)} not scheduled: ${(error as Error).message}`);
    }
  }

  /** Job counts per queue; undefined for a queue Redis did not answer for in time. */
  async counts(): Promise<Readonly<Record<TimerKind, QueueCounts | undefined>>> {
    const one = async (kind: TimerKind): Promise<QueueCounts | undefined> => {
      const counting = this.queues[kind].getJobCounts('waiting', 'delayed', 'active', 'failed');
      const timeout = new Promise<undefined>((resolve) =>
        setTimeout(() => resolve(undefined), COUNT_TIMEOUT_MS).unref(),
      );
      const counts = await Promise.race([counting.catch(() => undefined), timeout]);
      return counts === undefined ? undefined : countsOf(counts);
    };
    const [approval, expiry] = await Promise.all([one('approval'), one('expiry')]);
    return { approval, expiry };
  }

  /** Closes workers, queues and connections. */
  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close().catch(() => undefined)));
    await Promise.all(Object.values(this.queues).map((q) => q.close().catch(() => undefined)));
    this.connection.disconnect();
    this.workerConnection.disconnect();
  }

  /** Warnings at most every 5 s (a Redis outage would otherwise flood the log). */
  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastWarning < 5_000) return;
    this.lastWarning = now;
    this.options.log.warn(message);
  }
}

/** Name of the notification delivery queue (dashboard, metrics). */
export const NOTIFICATION_QUEUE = 'rolepolicy-notifications';

/** A delivery's job data: the occurrence (no secret in it) and which namespace's sink receives it. */
export interface DeliveryJob {
  readonly sinkNamespace: string;
  readonly occurrence: Occurrence;
  /** Epoch ms the delivery was queued (latency metric). */
  readonly queuedAt: number;
}

/** Thrown by a delivery that no retry can fix (a 4xx answer, a bad URL): the job goes to failed at once. */
export class PermanentDeliveryError extends Error {
  override readonly name = 'PermanentDeliveryError';
}

/** What happened to one attempt, for metrics and logs. */
export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly latencyMs: number }
  | { readonly kind: 'failed'; readonly error: Error; readonly deadLettered: boolean };

/** Options of {@link NotificationDeliveries}. */
export interface NotificationDeliveriesOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly attempts: number;
  readonly backoffMs: number;
  /** How long delivered jobs (their ids) are kept: an occurrence seen again within it is not sent again. */
  readonly keepDeliveredMs: number;
  /** Sends one delivery; throws to retry, {@link PermanentDeliveryError} to dead-letter at once. */
  readonly deliver: (job: DeliveryJob) => Promise<void>;
  readonly onAttempt: (job: DeliveryJob, outcome: AttemptOutcome) => void;
  readonly log: { warn(message: string): void };
}

const DEAD_LETTER_KEEP_SECONDS = 14 * 24 * 3600;

/**
 * Notification deliveries: one job per occurrence and sink, with the occurrence id in the job id, so the same
 * occurrence queued twice (a rebuild, a restart, two replicas) is one delivery while its job is kept.
 */
export class NotificationDeliveries {
  private readonly connection: Redis;
  private readonly workerConnection: Redis;
  readonly queue: Queue<DeliveryJob>;
  private worker: Worker<DeliveryJob> | undefined;
  private lastWarning = 0;

  constructor(private readonly options: NotificationDeliveriesOptions) {
    this.connection = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.workerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    for (const c of [this.connection, this.workerConnection])
      c.on('error', (e) => this.warn(`Redis: ${e.message}`));
    this.queue = new Queue<DeliveryJob>(NOTIFICATION_QUEUE, {
      connection: this.connection,
      prefix: options.prefix,
    });
    this.queue.on('error', (e) => this.warn(`queue ${NOTIFICATION_QUEUE}: ${e.message}`));
  }

  /** The job id of a delivery: the occurrence id and the sink's namespace. */
  static jobId(job: Pick<DeliveryJob, 'sinkNamespace' | 'occurrence'>): string {
    return `${job.occurrence.id}-${job.sinkNamespace}`;
  }

  /** Starts the worker. */
  start(): void {
    const worker = new Worker<DeliveryJob>(
      NOTIFICATION_QUEUE,
      async (job: Job<DeliveryJob>) => {
        try {
          await this.options.deliver(job.data);
        } catch (error) {
          const permanent = error instanceof PermanentDeliveryError;
          const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
          this.options.onAttempt(job.data, {
            kind: 'failed',
            error: error as Error,
            deadLettered: permanent || last,
          });
          throw permanent ? new UnrecoverableError((error as Error).message) : error;
        }
        this.options.onAttempt(job.data, { kind: 'delivered', latencyMs: Date.now() - job.data.queuedAt });
      },
      { connection: this.workerConnection, prefix: this.options.prefix, concurrency: 8 },
    );
    worker.on('error', (e) => this.warn(`worker ${NOTIFICATION_QUEUE}: ${e.message}`));
    this.worker = worker;
  }

  /** Queues a delivery unless its job exists; false when Redis did not take it (the next rebuild tries again). */
  async add(job: DeliveryJob): Promise<boolean> {
    try {
      await this.queue.add(job.occurrence.type, job, {
        jobId: NotificationDeliveries.jobId(job),
        attempts: this.options.attempts,
        backoff: { type: 'exponential', delay: this.options.backoffMs },
        removeOnComplete: { age: Math.ceil(this.options.keepDeliveredMs / 1000) },
        removeOnFail: { age: DEAD_LETTER_KEEP_SECONDS },
      });
      return true;
    } catch (error) {
      this.warn(`notification ${NotificationDeliveries.jobId(job)} not queued: ${(error as Error).message}`);
      return false;
    }
  }

  /** Job counts (undefined when Redis does not answer in time). */
  async counts(): Promise<QueueCounts | undefined> {
    const counting = this.queue.getJobCounts('waiting', 'delayed', 'active', 'failed');
    const timeout = new Promise<undefined>((resolve) =>
      setTimeout(() => resolve(undefined), COUNT_TIMEOUT_MS).unref(),
    );
    const counts = await Promise.race([counting.catch(() => undefined), timeout]);
    return counts === undefined ? undefined : countsOf(counts);
  }

  /** Closes the worker, the queue and the connections. */
  async stop(): Promise<void> {
    await this.worker?.close().catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    this.connection.disconnect();
    this.workerConnection.disconnect();
  }

  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastWarning < 5_000) return;
    this.lastWarning = now;
    this.options.log.warn(message);
  }
}
