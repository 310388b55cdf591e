// In-process mutual exclusion per key: work of one key runs one piece at a time in arrival order (urgent
// work first), work of other keys is not held up at all. The executor's per-database mutex in front of the
// PostgreSQL advisory lock, and the k8s-gateway's per-ordering-key command queues.

type Waiter = { readonly urgent: boolean; readonly start: () => void };

/**
 * Serialises work per key: in arrival order, except that urgent work (a revocation, ADR 0013) goes ahead of
 * every non-urgent waiter of its key (never ahead of the running one, nor of earlier urgent work). Keys with
 * nothing queued cost nothing.
 */
export class KeyedMutex {
  /** Per busy key: the waiters, in the order they will run (the running one is not in it). */
  private readonly queues = new Map<string, Waiter[]>();

  /** Keys with work running or queued (for tests and metrics). */
  get busyKeys(): number {
    return this.queues.size;
  }

  /**
   * Runs `fn` once the key is free and every waiter ahead of it has run; `waited` is called with the time
   * spent queued (milliseconds) just before `fn` starts. `urgent` work queues ahead of non-urgent work.
   */
  async run<T>(key: string, fn: () => Promise<T>, waited?: (ms: number) => void, urgent = false): Promise<T> {
    const queuedAt = performance.now();
    const queue = this.queues.get(key);
    if (queue === undefined) this.queues.set(key, []);
    else {
      await new Promise<void>((start) => {
        const waiter: Waiter = { urgent, start };
        const at = urgent ? queue.findIndex((w) => !w.urgent) : -1;
        if (at < 0) queue.push(waiter);
        else queue.splice(at, 0, waiter);
      });
    }
    try {
      waited?.(performance.now() - queuedAt);
      return await fn();
    } finally {
      const rest = this.queues.get(key)!;
      const next = rest.shift();
      if (next === undefined) this.queues.delete(key);
      else next.start();
    }
  }
}
