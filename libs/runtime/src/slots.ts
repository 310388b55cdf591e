// Bounded concurrency: the access-scheduler's passes (a burst of thousands of requests, a rebuild, runs a
// few at a time; a pass that is due, a revocation at its deadline, takes the next free slot first, ADR 0013)
// and the inspector's inspections (each holds database connections).

type Waiter = { readonly urgent: (() => boolean) | undefined; readonly start: () => void };

/**
 * A counting semaphore: at most `size` tasks run at once; the others wait in arrival order, except that a
 * waiter whose `urgent()` is true when a slot frees up goes first (asked then, so a request that became due
 * while it waited counts).
 */
export class Slots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly size: number) {}

  /** Tasks waiting for a slot (tests). */
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>, urgent?: () => boolean): Promise<T> {
    // A waiter's slot is taken for it when it is started (no newcomer can slip in between).
    if (this.running >= this.size) {
      await new Promise<void>((start) => this.waiting.push({ urgent, start }));
    } else this.running += 1;
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.next();
    }
  }

  private next(): void {
    if (this.waiting.length === 0) return;
    let at = this.waiting.findIndex((w) => w.urgent?.() === true);
    if (at < 0) at = 0;
    const [waiter] = this.waiting.splice(at, 1);
    this.running += 1;
    waiter!.start();
  }
}
