// The oracle of slots.spec: Slots as it was before hurried waiters (issue 28), asking every waiter's
// `urgent()` at every free slot.

type Waiter = { readonly urgent: (() => boolean) | undefined; readonly start: () => void };

/**
 * A counting semaphore: at most `size` tasks run at once; the others wait in arrival order, except that a
 * waiter whose `urgent()` is true when a slot frees up goes first (asked then, so a request that became due
 * while it waited counts).
 */
export class PollingSlots {
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
