// Bounded concurrency: the access-scheduler's passes (a burst of thousands of requests, a rebuild, runs a
// few at a time; a pass that is due, a revocation at its deadline, takes the next free slot first, ADR 0013),
// the planner's passes (a pass that confirms an apply goes first) and the inspector's inspections (each holds
// database connections).

type Waiter = {
  readonly urgent: (() => boolean) | undefined;
  readonly start: () => void;
  /** Arrival number: hurried waiters start in arrival order, as the polled ones do. */
  readonly seq: number;
  /** Waiting in arrival order; hurried (also in the hurried line); started. */
  state: 'waiting' | 'hurried' | 'started';
};

/** A waiter's handle: {@link hurry} puts it ahead of the waiters not hurried (no-op once it started). */
export interface SlotWaiter {
  hurry(): void;
}

/**
 * A counting semaphore: at most `size` tasks run at once; the others wait in arrival order, except that
 * hurried waiters go first (in arrival order), and then a waiter whose `urgent()` is true
 * when a slot frees up (asked then, so a request that became due while it waited counts). Hurrying is for
 * callers who know when a waiter becomes urgent: asking every waiter at every free slot costs a burst of N
 * waiters N predicates per task (the planner at 5,000 policies, issue 28).
 */
export class Slots {
  private running = 0;
  /** Arrival order; hurried and started waiters stay until they reach the front (skipped then). */
  private readonly waiting: Waiter[] = [];
  private readonly hurried: Waiter[] = [];
  /** Waiters not started yet, and how many of them have an `urgent` predicate (0: no scan). */
  private pending = 0;
  private polled = 0;
  private arrivals = 0;

  constructor(private readonly size: number) {}

  /** Tasks waiting for a slot (tests). */
  get queued(): number {
    return this.pending;
  }

  /**
   * Runs `task` in a slot. `onWait` receives the waiter's handle when the task must wait (synchronously,
   * before `run` returns).
   */
  async run<T>(
    task: () => Promise<T>,
    urgent?: () => boolean,
    onWait?: (waiter: SlotWaiter) => void,
  ): Promise<T> {
    // A waiter's slot is taken for it when it is started (no newcomer can slip in between).
    if (this.running >= this.size) {
      await new Promise<void>((start) => {
        const waiter: Waiter = { urgent, start, seq: this.arrivals++, state: 'waiting' };
        this.waiting.push(waiter);
        this.pending += 1;
        if (urgent !== undefined) this.polled += 1;
        onWait?.({ hurry: () => this.hurry(waiter) });
      });
    } else this.running += 1;
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.next();
    }
  }

  private hurry(waiter: Waiter): void {
    if (waiter.state !== 'waiting') return;
    waiter.state = 'hurried';
    let at = this.hurried.length; // few are hurried at once: an insertion keeps arrival order
    while (at > 0 && this.hurried[at - 1]!.seq > waiter.seq) at -= 1;
    this.hurried.splice(at, 0, waiter);
  }

  private next(): void {
    if (this.pending === 0) return;
    const waiter = this.hurried.shift() ?? this.polledUrgent() ?? this.firstWaiting();
    waiter.state = 'started';
    this.pending -= 1;
    if (waiter.urgent !== undefined) this.polled -= 1;
    while (this.waiting[0]?.state === 'started') this.waiting.shift();
    this.running += 1;
    waiter.start();
  }

  /** The first waiter (arrival order) whose predicate says it is urgent now; none asked if none has one. */
  private polledUrgent(): Waiter | undefined {
    if (this.polled === 0) return undefined;
    return this.waiting.find((w) => w.state === 'waiting' && w.urgent?.() === true);
  }

  private firstWaiting(): Waiter {
    return this.waiting.find((w) => w.state === 'waiting')!;
  }
}
