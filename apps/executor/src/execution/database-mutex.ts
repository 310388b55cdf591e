// In-process mutual exclusion per database, in front of the PostgreSQL advisory lock: with several
// requests in flight per replica, a second request for a database that this replica is already working
// on waits here (no connection, no pool, no lock_timeout) instead of inside PostgreSQL, and requests for
// other databases are not held up at all. The advisory lock stays the guarantee across replicas.

/** Serialises work per key in arrival order; keys with nothing queued cost nothing. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Keys with work running or queued (for tests and metrics). */
  get busyKeys(): number {
    return this.tails.size;
  }

  /**
   * Runs `fn` once every earlier `fn` of the same key has settled; `waited` is called with the time spent
   * queued (milliseconds) just before `fn` starts.
   */
  async run<T>(key: string, fn: () => Promise<T>, waited?: (ms: number) => void): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    const queuedAt = performance.now();
    try {
      await previous;
      waited?.(performance.now() - queuedAt);
      return await fn();
    } finally {
      release();
      // Only the last in line removes the key; a later arrival has replaced the tail already.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/**
 * The mutex key of a request: the connection reference the plan's digest binds (`target`) in the policy's
 * namespace. Aliases of one database through different Secrets get different keys; the advisory lock
 * (keyed by the database itself) still serialises them, they only wait inside PostgreSQL.
 */
export function databaseKey(request: {
  readonly policy: { readonly namespace: string };
  readonly target: string;
}): string {
  return `${request.policy.namespace}\u0000${request.target}`;
}
