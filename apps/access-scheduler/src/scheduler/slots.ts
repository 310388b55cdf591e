// Bounded concurrency for the scheduler's passes: each may read Secrets and send commands, so a burst of
// thousands of requests (a rebuild) runs a few at a time instead of all at once.

/** A counting semaphore: at most `size` tasks run at once, the others wait in arrival order. */
export class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }
}
