// Leader election of planner replicas over a CAS-only lease record (ADR 0011), with client-go's timing
// rules on an injected monotonic clock:
// - a candidate takes the lease only when the record did not change for the record's duration, timed on
//   its own clock from the moment it first saw that revision (clock skew between replicas cannot make a
//   live leader look dead), or when the record is released or absent;
// - a leader counts its term from the *start* of its last successful renew and stops leading once
//   `renewDeadlineMs` (< the duration) passed without another, whether or not the store answered;
// - every acquisition raises the epoch, the fencing token its commands carry.
// `tick()` is one round; the service drives it every `retryMs` (ElectionLoop), tests call it directly.
import { LeaseConflict, type LeaseRecord, type LeaseStore } from '@rolepolicy/contracts';

/** Durations of the election (milliseconds). */
export type ElectionTiming = {
  /** How long a holder may go without renewing before a candidate takes over. */
  readonly leaseDurationMs: number;
  /** A leader that could not renew for this long stops acting (strictly less than the duration). */
  readonly renewDeadlineMs: number;
  /** Interval of renewals (leader) and checks (standby). */
  readonly retryMs: number;
};

/** The term a leader acts in. */
export type LeaderTerm = {
  readonly epoch: number;
  readonly identity: string;
  /** The command stream sequence written at acquisition (see ElectorOptions.handoverSeq). */
  readonly handoverSeq?: number;
};

/** Why the timing is unsafe, or null (the caller turns it into a configuration error). */
export function timingProblem(t: ElectionTiming): string | null {
  if (t.renewDeadlineMs >= t.leaseDurationMs) {
    return 'the renew deadline must be shorter than the lease duration (the leader must stop before a standby may start)';
  }
  if (t.retryMs >= t.renewDeadlineMs) {
    return 'the retry period must be shorter than the renew deadline (a leader must get to renew before it gives up)';
  }
  return null;
}

type Observed = { readonly revision: number; readonly record: LeaseRecord; readonly seenAtMs: number };
type Leading = {
  readonly term: LeaderTerm;
  readonly record: LeaseRecord;
  readonly revision: number;
  readonly renewedAtMs: number;
};

/** Options of {@link Elector}. */
export type ElectorOptions = {
  readonly identity: string;
  readonly store: LeaseStore;
  readonly timing: ElectionTiming;
  /** Monotonic milliseconds (performance.now in the service). */
  readonly now: () => number;
  /** Called once per term, after the lease was written; must not throw. */
  readonly onStartedLeading: (term: LeaderTerm) => void;
  /** Called once when a term ends (deadline passed, lease lost, stopped); must not throw. */
  readonly onStoppedLeading: (term: LeaderTerm, why: string) => void;
  readonly onError?: (error: unknown) => void;
  /**
   * Read just before each acquisition and written into the record (`handoverSeq`): the last sequence of
   * the command stream, up to which the previous epoch's commands stay valid.
   */
  readonly handoverSeq?: () => Promise<number>;
};

/** One replica's view of the election. */
export class Elector {
  private observed: Observed | undefined;
  private leading: Leading | undefined;

  constructor(private readonly options: ElectorOptions) {
    const problem = timingProblem(options.timing);
    if (problem !== null) throw new Error(problem);
  }

  /** The term this replica may act in right now, or undefined (checked against the clock on every call). */
  term(): LeaderTerm | undefined {
    this.expire();
    return this.leading?.term;
  }

  /** Whether this replica may act right now. */
  isLeader(): boolean {
    return this.term() !== undefined;
  }

  /** When the current term ends unless renewed (monotonic ms), for a watchdog timer. */
  deadlineMs(): number | undefined {
    return this.leading === undefined
      ? undefined
      : this.leading.renewedAtMs + this.options.timing.renewDeadlineMs;
  }

  /** Steps down once the renew deadline passed (no store call). */
  expire(): void {
    if (this.leading !== undefined && this.options.now() >= this.deadlineMs()!) {
      this.stepDown('could not renew the lease before the renew deadline');
    }
  }

  /** One round: a leader renews, a standby checks and takes an expired, released or absent lease. */
  async tick(): Promise<void> {
    const startedMs = this.options.now();
    this.expire();
    try {
      if (this.leading !== undefined) await this.renew(this.leading, startedMs);
      else await this.contend(startedMs);
    } catch (error) {
      if (error instanceof LeaseConflict) {
        // Someone else wrote first: a leader has lost its lease (the record is no longer the one it wrote).
        if (this.leading !== undefined) this.stepDown('the lease was written by another replica');
      } else {
        this.options.onError?.(error);
      }
    }
    this.expire();
  }

  /** Ends the term and hands the lease over at once (a graceful stop); best effort. */
  async release(): Promise<void> {
    const leading = this.leading;
    if (leading === undefined) return;
    this.stepDown('stopping');
    try {
      await this.options.store.update({ ...leading.record, holder: '' }, leading.revision);
    } catch {
      // Lost or unreachable: the lease expires on its own.
    }
  }

  private async renew(leading: Leading, startedMs: number): Promise<void> {
    const revision = await this.options.store.update(leading.record, leading.revision);
    // A renew that answered after the deadline does not revive a term that ended meanwhile.
    if (this.leading !== leading) return;
    this.leading = { ...leading, revision, renewedAtMs: startedMs };
  }

  private async contend(startedMs: number): Promise<void> {
    const entry = await this.options.store.read();
    if (entry === null) {
      const record = await this.recordFor((this.observed?.record.epoch ?? 0) + 1);
      const revision = await this.options.store.create(record);
      this.stepUp(record, revision, startedMs);
      return;
    }
    if (this.observed?.revision !== entry.revision) {
      this.observed = { revision: entry.revision, record: entry.record, seenAtMs: startedMs };
    }
    const { record, seenAtMs } = this.observed;
    const free =
      record.holder === '' ||
      record.holder === this.options.identity ||
      startedMs - seenAtMs >= record.durationMs;
    if (!free) return;
    const next = await this.recordFor(record.epoch + 1);
    const revision = await this.options.store.update(next, entry.revision);
    this.stepUp(next, revision, startedMs);
  }

  private async recordFor(epoch: number): Promise<LeaseRecord> {
    const handover = this.options.handoverSeq ? { handoverSeq: await this.options.handoverSeq() } : {};
    return {
      holder: this.options.identity,
      epoch,
      durationMs: this.options.timing.leaseDurationMs,
      ...handover,
    };
  }

  private stepUp(record: LeaseRecord, revision: number, renewedAtMs: number): void {
    const term: LeaderTerm = {
      epoch: record.epoch,
      identity: this.options.identity,
      ...(record.handoverSeq === undefined ? {} : { handoverSeq: record.handoverSeq }),
    };
    this.leading = { term, record, revision, renewedAtMs };
    this.observed = undefined;
    // A write that took longer than the deadline leaves a term that is over already.
    if (this.options.now() >= renewedAtMs + this.options.timing.renewDeadlineMs) {
      this.leading = undefined;
      return;
    }
    this.options.onStartedLeading(term);
  }

  private stepDown(why: string): void {
    const leading = this.leading;
    if (leading === undefined) return;
    this.leading = undefined;
    this.options.onStoppedLeading(leading.term, why);
  }
}
