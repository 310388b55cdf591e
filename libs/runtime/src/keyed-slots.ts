// Bounded concurrency per key: at most `size` tasks of one key run at once, tasks of other keys never wait
// for them (the executor's executions per PostgreSQL server, EXECUTOR_SERVER_CONCURRENCY; the inspector's
// sessions per server). A key's slots exist while it has tasks running or waiting, so thousands of keys seen
// once cost nothing afterwards. Urgent tasks (a revocation, ADR 0013) take the next free slot of their key first.
import { Slots } from './slots.js';

type Entry = { readonly slots: Slots; users: number };

/** A {@link Slots} per key, created on first use and dropped when its last task ends. */
export class KeyedSlots {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error('KeyedSlots needs a size of at least 1');
  }

  /** Keys with a task running or waiting (tests, metrics). */
  get keys(): number {
    return this.entries.size;
  }

  /** Tasks of `key` waiting for a slot. */
  queued(key: string): number {
    return this.entries.get(key)?.slots.queued ?? 0;
  }

  /**
   * Runs `task` once one of `key`'s slots is free; waiters of one key start in arrival order, `urgent` ones
   * ahead of the others (never ahead of a running task).
   */
  async run<T>(key: string, task: () => Promise<T>, urgent = false): Promise<T> {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { slots: new Slots(this.size), users: 0 };
      this.entries.set(key, entry);
    }
    entry.users += 1;
    try {
      return await entry.slots.run(task, undefined, urgent ? (waiter) => waiter.hurry() : undefined);
    } finally {
      entry.users -= 1;
      if (entry.users === 0) this.entries.delete(key);
    }
  }

  /**
   * Waits for one of `key`'s slots and answers the function that gives it back (once; later calls do
   * nothing), for a holder whose work does not fit one callback.
   */
  async acquire(key: string, urgent = false): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await new Promise<void>((started) => {
      void this.run(
        key,
        () => {
          started();
          return held;
        },
        urgent,
      );
    });
    return release;
  }
}
