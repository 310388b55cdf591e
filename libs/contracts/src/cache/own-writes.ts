// Read-your-own-writes over a ResourceCache, built once for every service. A service's write reaches the
// cache only after the k8s-gateway applied it and published the object again; under a backlog that takes
// seconds or more. A pass deciding on the bare cache meanwhile would undo the write (put old conditions
// back, create a plan twice, supersede a plan it just saw applied). So a write is recorded with the
// resourceVersion it was based on, and reads see it until the cache shows that write or a newer version
// of the object. One bounded fallback: a write the cache never shows (the gateway refused it, or the
// stream compacted its event away) goes after `expiryMs`, and `onExpired` counts it
// (`rp_own_writes_expired_total{store}` in every service's registry).

/** A write of ours the cache may not show yet. */
export type OwnWrite<T> = {
  /** What reads see instead of (or on top of) the cached object while the write is pending. */
  readonly value: T;
  /** resourceVersion of the object the write was based on; undefined when the write created it. */
  readonly basedOn: string | undefined;
  /** When it was recorded (the store's clock), for the fallback. */
  readonly at: number;
};

/** The part of a cached object own writes read: its resourceVersion. */
export type Versioned = { readonly metadata: { readonly resourceVersion?: string | undefined } };

/** Options of {@link OwnWrites}. */
export type OwnWritesOptions<T, C> = {
  /** Names the store in the fallback metric's `store` label (e.g. `planner-policy-status`). */
  readonly store: string;
  /** The fallback: a write the cache has not shown after this long is dropped (and counted). */
  readonly expiryMs: number;
  /** The clock; default `Date.now`. */
  readonly now?: () => number;
  /** Called with {@link store} each time the fallback drops a write. */
  readonly onExpired?: (store: string) => void;
  /**
   * Whether the cached object shows the write or something newer. Default: its resourceVersion is newer
   * than the one the write was based on ({@link newerVersion}), which holds for writes the gateway makes
   * conditional on that version. A write it applies unconditionally, or one another service makes on our
   * behalf, says what "shows" means by content instead (e.g. the status it set is there).
   */
  readonly shows?: (cached: C, write: OwnWrite<T>) => boolean;
};

/** The version string as an integer when it is one (the API's versions are etcd revisions in practice). */
function asInteger(version: string): bigint | undefined {
  return /^[0-9]{1,30}$/.test(version) ? BigInt(version) : undefined;
}

/**
 * True when `cached` is a later version than `basedOn`: any version is later than none (the write created
 * the object); integer versions compare as numbers, so a cache that goes back (a replayed older event) is
 * not taken for showing the write; other versions are opaque and any change counts.
 */
export function newerVersion(cached: string | undefined, basedOn: string | undefined): boolean {
  if (cached === undefined || cached === '') return false;
  if (basedOn === undefined || basedOn === '') return true;
  const a = asInteger(cached);
  const b = asInteger(basedOn);
  return a !== undefined && b !== undefined ? a > b : cached !== basedOn;
}

/**
 * The writes of one kind of write a service made, by key, each pending until the cache shows it.
 * @example
 * const written = new OwnWrites<CandidateStatus, Versioned>({ store: 'candidate-status', expiryMs: 30_000 });
 * written.record(uid, status, candidate.metadata.resourceVersion);
 * const status = written.pending(uid, cached)?.value ?? cached.status;
 */
export class OwnWrites<T, C extends Versioned = Versioned> {
  private readonly writes = new Map<string, OwnWrite<T>>();
  private readonly now: () => number;

  constructor(private readonly options: OwnWritesOptions<T, C>) {
    this.now = options.now ?? Date.now;
  }

  /** Records a write made on the object at version `basedOn` (undefined: the write creates it). */
  record(key: string, value: T, basedOn: string | undefined): void {
    this.writes.set(key, { value, basedOn, at: this.now() });
  }

  /** Forgets the write (the object was deleted, or the write is known to have failed or been replaced). */
  forget(key: string): void {
    this.writes.delete(key);
  }

  /**
   * The write still pending over `cached` (the object as the cache has it now, undefined when absent), or
   * undefined once the cache shows it (the entry goes) or the fallback dropped it.
   */
  pending(key: string, cached: C | undefined): OwnWrite<T> | undefined {
    const write = this.writes.get(key);
    if (write === undefined) return undefined;
    if (cached !== undefined && this.shown(cached, write)) {
      this.writes.delete(key);
      return undefined;
    }
    if (this.now() - write.at > this.options.expiryMs) {
      this.writes.delete(key);
      this.options.onExpired?.(this.options.store);
      return undefined;
    }
    return write;
  }

  /** The keys with a recorded write (pending or not yet checked), e.g. to list created objects. */
  keys(): string[] {
    return [...this.writes.keys()];
  }

  /** How many writes are recorded: for tests and gauges. */
  get size(): number {
    return this.writes.size;
  }

  private shown(cached: C, write: OwnWrite<T>): boolean {
    const shows = this.options.shows;
    return shows !== undefined
      ? shows(cached, write)
      : newerVersion(cached.metadata.resourceVersion, write.basedOn);
  }
}
