// The highest stream sequence a ResourceCache has applied per kind, and the callers waiting for one: a reader
// told "the sender had seen sequence S of this kind" knows its view holds at least that once it reaches S.
import type { ResourceKindToken } from '../subjects.js';

/** Per kind, the stream sequence to have applied (a kind not listed is not waited for). */
export type SequencesToApply = Readonly<Partial<Record<ResourceKindToken, number>>>;

/**
 * Per kind of `kinds`, the highest sequence `cache` has applied, leaving out a kind it has not applied any event
 * of (the contracts refuse sequence 0): what a request tells its receiver the sender had seen.
 * @example
 * seenOf(cache, ['postgrespolicyplan']); // { postgrespolicyplan: 42 } once the plan event stored at 42 is applied
 */
export function seenOf<K extends ResourceKindToken>(
  cache: { appliedSequence(kind: ResourceKindToken): number },
  kinds: readonly K[],
): Partial<Record<K, number>> {
  const seen: Partial<Record<K, number>> = {};
  for (const kind of kinds) {
    const seq = cache.appliedSequence(kind);
    if (seq > 0) seen[kind] = seq;
  }
  return seen;
}

/**
 * Sequences only grow: a kind followed again after a reconnect starts over from the last message per
 * subject, but what it applied before stays in the view until newer events replace it, so a reached
 * sequence stays reached. Waiting asks the server nothing.
 * @example
 * const applied = new AppliedSequences();
 * applied.ready(); // the cache's first delivery is complete
 * applied.applied('postgrespolicyplan', 42); // the cache applied the plan event stored at 42
 * await applied.reach({ postgrespolicyplan: 42 }, 1_000); // true at once
 */
export class AppliedSequences {
  private readonly highest = new Map<ResourceKindToken, number>();
  private readonly waiters = new Set<() => void>();
  private stopped = false;
  /**
   * False during the cache's first delivery: LastPerSubject skips a subject's older messages, so a kind can
   * pass sequence S before the subject whose only message at or below S was superseded later is applied.
   */
  private complete = false;

  /** Records that the event stored at `seq` of `kind` has been applied, and wakes the waiters. */
  applied(kind: ResourceKindToken, seq: number): void {
    if (seq <= (this.highest.get(kind) ?? 0)) return;
    this.highest.set(kind, seq);
    for (const wake of [...this.waiters]) wake();
  }

  /** The first delivery of every kind is applied: from now on a reached sequence covers what lies below it. */
  ready(): void {
    this.complete = true;
    for (const wake of [...this.waiters]) wake();
  }

  /** The highest stream sequence of `kind` applied so far (0 before the first event of the kind). */
  of(kind: ResourceKindToken): number {
    return this.highest.get(kind) ?? 0;
  }

  /** True when the first delivery is complete and every listed kind has applied at least its sequence. */
  covers(sequences: SequencesToApply): boolean {
    if (!this.complete) return false;
    return Object.entries(sequences).every(([kind, seq]) => this.of(kind as ResourceKindToken) >= (seq ?? 0));
  }

  /**
   * Resolves true once every listed kind has applied at least its sequence, false after `timeoutMs` or when
   * stopped. A kind this cache does not follow never gets there: the caller's timeout decides.
   */
  reach(sequences: SequencesToApply, timeoutMs: number): Promise<boolean> {
    if (this.covers(sequences)) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (reached: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(reached);
      };
      const check = (): void => {
        if (this.stopped) done(false);
        else if (this.covers(sequences)) done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Ends every wait (false) and any later one at once. */
  stop(): void {
    this.stopped = true;
    for (const wake of [...this.waiters]) wake();
  }
}
