// Per-key serial work with coalescing: one run per policy at a time, and at most one more queued behind
// it (a burst of events becomes a single follow-up pass, which re-reads everything anyway). With `slots`,
// passes of different keys run a bounded number at a time: a fleet's burst of thousands of events must not
// put thousands of passes on the event loop at once, or timers (a leader's lease renewal) starve and the
// service falls over under exactly the load it should only be slower under.
import type { SlotWaiter, Slots } from './slots.js';

/** Options of {@link KeyedQueue}. */
export interface KeyedQueueOptions {
  /** Bounds the passes ({@link KeyedQueue.schedule}) running at once; {@link KeyedQueue.run} never waits on it. */
  readonly slots?: Slots;
}

/** Serialises async work per key. */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  /** Passes requested and not started yet (waiting for a slot or for the key's running work). */
  private readonly queued = new Map<string, Promise<void>>();
  /** Passes waiting for a slot, by key: {@link hurry} puts one ahead of the others. */
  private readonly waitingSlot = new Map<string, SlotWaiter>();

  constructor(
    private readonly onError: (key: string, error: unknown) => void,
    private readonly options: KeyedQueueOptions = {},
  ) {}

  /**
   * Runs `work` after the key's current run; a second request while one is queued is merged into it. A
   * pass stays "queued" (and keeps merging requests) while it waits for a slot: it has read nothing yet,
   * so it joins its key's line only once it holds one, and a result ({@link run}) arriving meanwhile goes
   * first. A waiting pass goes before the others once it is hurried: when `urgent()` is true as it is
   * requested (or a request is merged into it), or by {@link hurry} when it becomes urgent while it waits
   * (asking every waiting pass at every free slot grew with the fleet, issue 28).
   */
  schedule(key: string, work: () => Promise<void>, urgent?: () => boolean): Promise<void> {
    const merged = this.queued.get(key);
    if (merged !== undefined) {
      if (urgent?.() === true) this.hurry(key);
      return merged;
    }
    const start = async (): Promise<void> => {
      this.queued.delete(key);
      await work();
    };
    const slots = this.options.slots;
    const done =
      slots === undefined
        ? this.enqueue(key, start)
        : slots
            .run(
              () => {
                this.waitingSlot.delete(key);
                return this.enqueue(key, start);
              },
              undefined,
              (waiter) => {
                this.waitingSlot.set(key, waiter);
                if (urgent?.() === true) waiter.hurry();
              },
            )
            .catch((error: unknown) => this.onError(key, error));
    this.queued.set(key, done);
    return done;
  }

  /** The key's pass waiting for a slot (if any) goes before the waiting passes not hurried. */
  hurry(key: string): void {
    this.waitingSlot.get(key)?.hurry();
  }

  /**
   * Runs `work` after the key's running work, never merged (for results that must each be handled), and
   * never behind a pass that has not started: a result must not wait for a slot.
   */
  run(key: string, work: () => Promise<void>): Promise<void> {
    return this.enqueue(key, work);
  }

  /** Resolves when every key is idle. */
  async idle(): Promise<void> {
    while (this.tails.size > 0 || this.queued.size > 0) {
      await Promise.all([...this.tails.values(), ...this.queued.values()]);
    }
  }

  private enqueue(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(work).catch((error: unknown) => this.onError(key, error));
    this.tails.set(key, next);
    void next.then(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return next;
  }
}
