// The scheduler's timers on BullMQ (the only module importing it): approval deadlines and access expiry
// as delayed jobs with deterministic ids. Redis holds no truth: every job is re-added from resource state
// on each rebuild, and a job only wakes a reconcile, which re-reads everything and acts on the clock.
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';

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
      return counts === undefined ? undefined : (counts as unknown as QueueCounts);
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
