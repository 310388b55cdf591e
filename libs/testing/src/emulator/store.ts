// In-memory storage with one global resourceVersion counter, a bounded event history and watch fan-out.
// Everything runs on one thread, so replaying history and subscribing a watcher happen atomically.
import { expired } from './errors.js';
import type { Selector } from './selectors.js';
import type { KubeObject, StatusBody } from './types.js';

/** Watch event types a stored change produces. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, kept in history so watches can resume from a resourceVersion. */
export type StoredEvent = {
  readonly type: ChangeType;
  readonly key: string;
  readonly rv: number;
  readonly object: KubeObject;
  readonly previous: KubeObject | undefined;
};

/** What a watcher wants: one storage key, optionally one namespace, and a selector. */
export type WatchFilter = {
  readonly key: string;
  readonly namespace: string | undefined;
  readonly selector: Selector;
};

/** Receives the events a watcher matches. */
export type WatchSink = (type: ChangeType, object: KubeObject) => void;

type Watcher = WatchFilter & { readonly sink: WatchSink };

/** Result of opening a watch: a cancel function, or the 410 Status when the version is too old. */
export type WatchStart =
  { readonly ok: true; readonly cancel: () => void } | { readonly ok: false; readonly status: StatusBody };

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Storage of every object, keyed by `group/plural` and then `namespace/name`. */
export class ObjectStore {
  private rv = 0;
  private compactedRv = 0;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();

  constructor(private historyLimit: number) {}

  /** The newest resourceVersion handed out. */
  currentRv(): number {
    return this.rv;
  }

  /** Reserves the next resourceVersion. */
  nextRv(): number {
    this.rv += 1;
    return this.rv;
  }

  get(key: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(key)?.get(objectKey(namespace, name));
  }

  /** Objects of one resource, optionally in one namespace, sorted by namespace then name. */
  list(key: string, namespace?: string): KubeObject[] {
    const all = [...(this.objects.get(key)?.values() ?? [])];
    return all
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .sort((a, b) =>
        objectKey(a.metadata.namespace, a.metadata.name!).localeCompare(
          objectKey(b.metadata.namespace, b.metadata.name!),
        ),
      );
  }

  /** Every stored object of every resource (for cascades). */
  *all(): Generator<{ key: string; object: KubeObject }> {
    for (const [key, map] of this.objects) for (const object of map.values()) yield { key, object };
  }

  /** Stores a created or updated object (its resourceVersion already set) and notifies watchers. */
  put(key: string, object: KubeObject, previous: KubeObject | undefined): void {
    let map = this.objects.get(key);
    if (!map) {
      map = new Map();
      this.objects.set(key, map);
    }
    map.set(objectKey(object.metadata.namespace, object.metadata.name!), object);
    this.record({
      type: previous ? 'MODIFIED' : 'ADDED',
      key,
      rv: Number(object.metadata.resourceVersion),
      object,
      previous,
    });
  }

  /** Removes an object; the DELETED event carries the object with a fresh resourceVersion. */
  remove(key: string, object: KubeObject): KubeObject {
    const previous = this.objects.get(key)?.get(objectKey(object.metadata.namespace, object.metadata.name!));
    this.objects.get(key)?.delete(objectKey(object.metadata.namespace, object.metadata.name!));
    const rv = this.nextRv();
    const gone: KubeObject = { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } };
    this.record({ type: 'DELETED', key, rv, object: gone, previous });
    return gone;
  }

  /** Drops every stored object of a resource (CRD deletion), notifying watchers. */
  removeAll(key: string): void {
    for (const object of this.list(key)) this.remove(key, object);
  }

  /** Changes how many events are kept; older ones make watches from their versions answer 410. */
  setHistoryLimit(limit: number): void {
    this.historyLimit = limit;
    this.trim();
  }

  /** Forgets all history, so a watch from any version older than now gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  /**
   * Opens a watch. With `fromRv` undefined the current objects are replayed as ADDED first (the
   * API server's "get state and start at most recent"); otherwise history after `fromRv` is replayed.
   */
  watch(filter: WatchFilter, fromRv: number | undefined, sink: WatchSink): WatchStart {
    if (fromRv === undefined) {
      for (const object of this.list(filter.key, filter.namespace)) {
        if (filter.selector(object)) sink('ADDED', object);
      }
    } else {
      if (fromRv < this.compactedRv) return { ok: false, status: expired(fromRv, this.compactedRv + 1) };
      for (const event of this.history) {
        if (event.rv > fromRv) deliver({ ...filter, sink }, event);
      }
    }
    const watcher: Watcher = { ...filter, sink };
    this.watchers.add(watcher);
    return { ok: true, cancel: () => this.watchers.delete(watcher) };
  }

  private record(event: StoredEvent): void {
    this.history.push(event);
    this.trim();
    for (const watcher of [...this.watchers]) deliver(watcher, event);
  }

  private trim(): void {
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift()!;
      this.compactedRv = dropped.rv;
    }
  }
}

// A selector change turns MODIFIED into ADDED or DELETED for the watcher, as the watch cache does.
function deliver(watcher: Watcher, event: StoredEvent): void {
  if (watcher.key !== event.key) return;
  if (watcher.namespace !== undefined && event.object.metadata.namespace !== watcher.namespace) return;
  const now = watcher.selector(event.object);
  switch (event.type) {
    case 'ADDED':
    case 'DELETED':
      if (now) watcher.sink(event.type, event.object);
      return;
    case 'MODIFIED': {
      const before = event.previous !== undefined && watcher.selector(event.previous);
      if (before && now) watcher.sink('MODIFIED', event.object);
      else if (now) watcher.sink('ADDED', event.object);
      else if (before) watcher.sink('DELETED', event.object);
      return;
    }
    default: {
      const never: never = event.type;
      return never;
    }
  }
}
