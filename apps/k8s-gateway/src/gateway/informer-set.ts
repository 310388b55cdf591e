// Informers (list + watch) for every watched kind, with restart and exponential backoff after errors
// (client-node informers stop on any error but 410, which they answer with a re-list), periodic resync,
// and the Secret/ConfigMap filter: only objects a rolepolicy.io object names or owns (and notifications ConfigMaps) pass.
// Output goes through a queue holding the latest state per object: a failed publish is retried with
// backoff (never reordered within an object), and after each LIST and resync a marker per kind says
// what the API has (ADR 0005).
import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { nakDelayMs, type BackoffPolicy, type ResyncMarkerV1 } from '@rolepolicy/contracts';
import { isNotificationsConfigMap, notificationSecretReferences } from './notifications-configmap.js';
import { ownedByRolepolicy, SecretReferenceIndex, type SecretKeys } from './references.js';
import { WATCHED_KINDS, collectionPath, listFunction, type WatchedKind } from './watched-kinds.js';

/** Why an object is being passed on. */
export type ChangeReason = 'add' | 'update' | 'delete' | 'resync';

/** One object state to publish. */
export type ResourceChange = {
  readonly kind: WatchedKind;
  readonly reason: ChangeReason;
  readonly object: KubernetesObject;
};

/** Receives every change; a throw is retried with backoff and never stops the informers. */
export type ChangeSink = (change: ResourceChange) => Promise<void>;

/** Every object of one kind the API has, as the informer's cache holds it at the moment of sending. */
export type KindListing = {
  readonly kind: WatchedKind;
  readonly objects: readonly ResyncMarkerV1['objects'][number][];
  /** The resourceVersion up to which the informer's cache is current (its last event or bookmark). */
  readonly listResourceVersion: string | undefined;
};

/** Receives the resync markers; a throw is retried like a change. */
export type MarkerSink = (listing: KindListing) => Promise<void>;

/** Bounds of the retry of one queued publish. */
export type PublishRetryPolicy = {
  /** Sends of one object state before it is dropped (the reconnect republish and the resync pick it up). */
  readonly attempts: number;
  readonly backoff: BackoffPolicy;
};

/** Default: 250 ms doubling to 5 s, 12 sends (a minute or so) per object state. */
export const DEFAULT_PUBLISH_RETRY_POLICY: PublishRetryPolicy = {
  attempts: 12,
  backoff: { initialMs: 250, maxMs: 5_000 },
};

type Outgoing =
  | { readonly type: 'change'; readonly change: ResourceChange }
  | { readonly type: 'marker'; readonly kind: WatchedKind };

/** Options of {@link InformerSet}. */
export type InformerSetOptions = {
  /** Namespace to watch, or undefined for the whole cluster. */
  readonly namespace: string | undefined;
  readonly resyncIntervalMs: number;
  readonly restartBackoff: BackoffPolicy;
  readonly sink: ChangeSink;
  readonly markerSink?: MarkerSink;
  /**
   * Told of every informer event as it arrives, filtered kinds too (the command applier lets go of its own
   * writes the informers now hold); must not throw.
   */
  readonly observe?: (kind: WatchedKind, object: KubernetesObject, deleted: boolean) => void;
  readonly publishRetry?: PublishRetryPolicy;
  /** True when the failure will not go away by sending again (e.g. the payload is too large). */
  readonly permanent?: (error: unknown) => boolean;
  readonly log: { warn(message: string): void };
};

type Running = {
  readonly kind: WatchedKind;
  readonly informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  failures: number;
  restart: NodeJS.Timeout | undefined;
  /** Set once a LIST completed, so the cache is the API's view. */
  listed: boolean;
};

function keyOf(object: KubernetesObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

function versionOf(object: KubernetesObject): string {
  return `${object.metadata?.uid ?? ''}:${object.metadata?.resourceVersion ?? ''}`;
}

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

/** The informers of one gateway leader term. */
export class InformerSet {
  private running: Running[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Every Secret some rolepolicy.io object names, updated one informer event at a time. */
  private readonly references = new SecretReferenceIndex();
  private starting: Promise<void> = Promise.resolve();
  /** Latest unsent state per object (or marker per kind), in the order to send; a newer state moves to the end. */
  private readonly pending = new Map<string, Outgoing>();
  private readonly attempts = new Map<string, number>();
  /** `uid:resourceVersion` last published per object key, so a reconnect republishes only what did not go out. */
  private readonly published = new Map<string, { readonly kind: WatchedKind; readonly version: string }>();
  private readonly markerSentAt = new Map<string, number>();
  private pumping = false;
  private failureStreak = 0;
  private wake: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: InformerSetOptions,
  ) {}

  /** Starts every informer (initial list + watch). */
  async start(): Promise<void> {
    this.stopped = false;
    this.running = WATCHED_KINDS.map((kind) => this.create(kind));
    this.starting = Promise.all(this.running.map((r) => this.startOne(r))).then(() => undefined);
    await this.starting;
    this.resyncTimer = setInterval(() => void this.resync(), this.options.resyncIntervalMs);
  }

  /** Stops every informer and the resync timer; unsent states are dropped (the next leader lists anew). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending.clear();
    this.wake?.();
    this.settleIdle();
    // An informer stopped halfway through its first list would still open its watch afterwards.
    await this.starting;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const r of this.running) if (r.restart) clearTimeout(r.restart);
    await Promise.all(this.running.map((r) => r.informer.stop()));
    this.running = [];
    this.references.clear();
  }

  /** Passes every cached object on again, then a marker per kind; resolves once the queue is empty. */
  async resync(): Promise<void> {
    for (const r of this.running) {
      for (const object of r.informer.list()) {
        if (this.shouldPublish(r.kind, object)) this.emit(r.kind, 'resync', object);
      }
      this.enqueueMarker(r.kind);
    }
    await this.idle();
  }

  /**
   * After the broker came back: sends at once what was not published (changes whose retries ran out, and
   * deletes of objects published before), then a marker per kind, and retries the queue without waiting.
   */
  republishUnsent(): void {
    if (this.stopped) return;
    const live = new Set<string>();
    for (const r of this.running) {
      for (const object of r.informer.list()) {
        if (!this.shouldPublish(r.kind, object)) continue;
        const key = this.keyFor(r.kind, object);
        live.add(key);
        if (this.published.get(key)?.version !== versionOf(object) && !this.pending.has(key))
          this.emit(r.kind, 'update', object);
      }
    }
    for (const [key, { kind, version }] of this.published) {
      if (live.has(key) || this.pending.has(key)) continue;
      const [namespace = '', name = ''] = key.slice(kind.token.length + 1).split('/');
      // Still in the API, only no longer referenced (a Secret): not a delete.
      if (this.running.find((r) => r.kind === kind)?.informer.get(name, namespace)) continue;
      this.emit(kind, 'delete', {
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        // The uid keeps the tombstone's message id (uid:resourceVersion:delete) apart from other objects'.
        metadata: { namespace, name, uid: version.split(':')[0] ?? '' },
      });
    }
    for (const r of this.running) this.enqueueMarker(r.kind);
    this.failureStreak = 0;
    this.wake?.();
  }

  /**
   * Queues a marker for each of `tokens` and resolves, once the queue is empty, with those whose marker
   * went out after the call (for a requester that waits for them).
   */
  async sendMarkers(tokens: readonly string[]): Promise<string[]> {
    const since = performance.now();
    const kinds = this.running.filter((r) => tokens.includes(r.kind.token)).map((r) => r.kind);
    for (const kind of kinds) this.enqueueMarker(kind);
    await this.idle();
    return kinds.filter((k) => (this.markerSentAt.get(k.token) ?? -1) >= since).map((k) => k.token);
  }

  /** Resolves once nothing is waiting to be published (sent, or dropped after its retries). */
  idle(): Promise<void> {
    if (this.pending.size === 0 && !this.pumping) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Whether the API has that object: `true`/`false` for a watched kind once its informer listed,
   * `undefined` when the gateway cannot tell (kind not watched, namespace outside the watch, not listed yet).
   */
  has(kind: string, namespace: string, name: string, uid: string): boolean | undefined {
    const r = this.running.find((x) => x.kind.kind === kind);
    if (r === undefined || !r.listed) return undefined;
    if (this.options.namespace !== undefined && namespace !== this.options.namespace) return undefined;
    return r.informer.get(name, namespace)?.metadata?.uid === uid;
  }

  /** The object of a watched kind as the informer's cache has it now (undefined: not there, or not known). */
  get(kind: string, namespace: string, name: string): KubernetesObject | undefined {
    const r = this.running.find((x) => x.kind.kind === kind);
    if (r === undefined || !r.listed) return undefined;
    return r.informer.get(name, namespace);
  }

  /**
   * The cached object for a command's target: `null` when its kind was listed and the cache does not have it,
   * `undefined` when the informers cannot tell (kind or apiVersion not watched, namespace outside the watch,
   * not listed yet). The informers' own object: never to be mutated.
   */
  cached(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): KubernetesObject | null | undefined {
    const r = this.running.find((x) => x.kind.kind === kind);
    if (r === undefined || !r.listed || r.kind.apiVersion !== apiVersion) return undefined;
    if (this.options.namespace !== undefined && namespace !== this.options.namespace) return undefined;
    return r.informer.get(name, namespace) ?? null;
  }

  /**
   * Whether a rolepolicy.io object in `namespace` names Secret `name`, as the informers' caches have it now
   * (the index follows every informer event, so a policy created a moment ago already counts).
   */
  isReferenced(namespace: string, name: string): boolean {
    return this.references.has(namespace, name);
  }

  /** The keys of a Secret that the rolepolicy.io objects naming it read. */
  referencedKeys(namespace: string, name: string): SecretKeys {
    return this.references.keysOf(namespace, name);
  }

  private create(kind: WatchedKind): Running {
    const list = listFunction(this.kc, kind, this.options.namespace);
    const running: Running = {
      kind,
      informer: makeInformer(this.kc, collectionPath(kind, this.options.namespace), async () => {
        const result = await list();
        running.failures = 0;
        running.listed = true;
        // The informer replaces its cache and calls back with the differences right after this returns;
        // the marker is queued behind them and lists the cache as it is when it is sent.
        setImmediate(() => this.enqueueMarker(kind));
        return result;
      }),
      failures: 0,
      restart: undefined,
      listed: false,
    };
    const { informer } = running;
    informer.on('add', (o) => void this.changed(kind, 'add', o));
    informer.on('update', (o) => void this.changed(kind, 'update', o));
    informer.on('delete', (o) => void this.changed(kind, 'delete', o));
    informer.on('error', (err: unknown) => this.failed(running, err));
    return running;
  }

  private async startOne(running: Running): Promise<void> {
    try {
      await running.informer.start();
    } catch (err) {
      this.failed(running, err);
    }
  }

  private failed(running: Running, err: unknown): void {
    if (this.stopped) return;
    running.failures += 1;
    const delay = nakDelayMs(running.failures, this.options.restartBackoff);
    const message = err instanceof Error ? err.message : String(err);
    this.options.log.warn(
      `informer ${running.kind.plural} failed (${message.split('\n')[0]}); restarting in ${delay} ms`,
    );
    if (running.restart) clearTimeout(running.restart);
    running.restart = setTimeout(() => {
      running.restart = undefined;
      if (!this.stopped) void this.startOne(running);
    }, delay);
  }

  private changed(kind: WatchedKind, reason: ChangeReason, object: KubernetesObject): void {
    this.options.observe?.(kind, object, reason === 'delete');
    if (isNotificationsConfigMap(kind, object)) {
      // It names the Secrets holding its sink's URL and signing keys: they become readable like a policy's.
      this.emit(kind, reason, object);
      this.updateReferences(kind, reason, object, notificationSecretReferences(object));
      return;
    }
    if (!kind.filtered) {
      this.emit(kind, reason, object);
      this.updateReferences(kind, reason, object);
      return;
    }
    if (this.shouldPublish(kind, object)) this.emit(kind, reason, object);
  }

  private shouldPublish(kind: WatchedKind, object: KubernetesObject): boolean {
    if (!kind.filtered) return true;
    if (ownedByRolepolicy(object) || isNotificationsConfigMap(kind, object)) return true;
    const meta = object.metadata ?? {};
    return kind.kind === 'Secret' && this.references.has(meta.namespace ?? '', meta.name ?? '');
  }

  /** Follows one object's Secret references; Secrets newly referenced are passed on from the cache at once. */
  private updateReferences(
    kind: WatchedKind,
    reason: ChangeReason,
    object: KubernetesObject,
    references?: ReadonlyMap<string, SecretKeys>,
  ): void {
    const key = this.keyFor(kind, object);
    if (reason === 'delete') {
      this.references.remove(key);
      return;
    }
    const added = this.references.set(key, object.metadata?.namespace ?? '', object, references);
    if (added.length === 0) return;
    const secrets = this.running.find((r) => r.kind.kind === 'Secret');
    for (const key of added) {
      const [namespace, name] = key.split('/') as [string, string];
      const secret = secrets?.informer.get(name, namespace);
      if (secrets && secret && !ownedByRolepolicy(secret)) this.emit(secrets.kind, 'resync', secret);
    }
  }

  private keyFor(kind: WatchedKind, object: KubernetesObject): string {
    return `${kind.token}/${keyOf(object)}`;
  }

  /** Queues the object's latest state; an unsent older state of the same object is replaced. */
  private emit(kind: WatchedKind, reason: ChangeReason, object: KubernetesObject): void {
    this.enqueue(this.keyFor(kind, object), { type: 'change', change: { kind, reason, object } });
  }

  private enqueueMarker(kind: WatchedKind): void {
    if (this.options.markerSink !== undefined) this.enqueue(`${kind.token}/`, { type: 'marker', kind });
  }

  private enqueue(key: string, item: Outgoing): void {
    if (this.stopped) return;
    // Re-inserting moves the key to the end: a state is never sent ahead of a marker queued before it.
    this.pending.delete(key);
    this.attempts.delete(key);
    this.pending.set(key, item);
    void this.pump();
  }

  /** Sends the queue in order, one at a time; after a failure it waits (backoff) and goes on. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    const policy = this.options.publishRetry ?? DEFAULT_PUBLISH_RETRY_POLICY;
    try {
      while (!this.stopped && this.pending.size > 0) {
        const [key, item] = this.pending.entries().next().value as [string, Outgoing];
        try {
          const sent = await this.send(item);
          this.failureStreak = 0;
          if (this.pending.get(key) === item) {
            this.pending.delete(key);
            this.attempts.delete(key);
          }
          if (sent) this.record(key, item);
        } catch (err) {
          if (this.pending.get(key) !== item) continue; // a newer state is queued; send that instead
          const attempt = (this.attempts.get(key) ?? 0) + 1;
          const what = item.type === 'marker' ? `the ${item.kind.plural} resync marker` : `${key}`;
          if (attempt >= policy.attempts || this.options.permanent?.(err) === true) {
            this.pending.delete(key);
            this.attempts.delete(key);
            if (item.type === 'change') this.published.delete(key);
            this.options.log.warn(
              `publishing ${what} failed: ${messageOf(err)}; giving up after ${attempt} sends`,
            );
            continue;
          }
          this.attempts.set(key, attempt);
          // To the end of the queue, so one object that cannot be sent does not hold the others back.
          this.pending.delete(key);
          this.pending.set(key, item);
          this.failureStreak += 1;
          const delay = nakDelayMs(this.failureStreak, policy.backoff);
          if (this.failureStreak === 1 || delay === policy.backoff.maxMs) {
            this.options.log.warn(`publishing ${what} failed: ${messageOf(err)}; retrying in ${delay} ms`);
          }
          await this.pause(delay);
        }
      }
    } finally {
      this.pumping = false;
      if (this.pending.size > 0 && !this.stopped) void this.pump();
      else this.settleIdle();
    }
  }

  /** Publishes one item; false when there was nothing to send (a marker of a kind not listed yet). */
  private async send(item: Outgoing): Promise<boolean> {
    if (item.type === 'change') {
      await this.options.sink(item.change);
      return true;
    }
    const running = this.running.find((r) => r.kind === item.kind);
    if (running === undefined || !running.listed) return false;
    const objects = running.informer
      .list()
      .map((o) => ({ uid: o.metadata?.uid ?? '', resourceVersion: o.metadata?.resourceVersion ?? '' }))
      .filter((o) => o.uid !== '' && o.resourceVersion !== '');
    const latest = (running.informer as { latestResourceVersion?: () => string }).latestResourceVersion?.();
    await this.options.markerSink?.({ kind: item.kind, objects, listResourceVersion: latest || undefined });
    return true;
  }

  private record(key: string, item: Outgoing): void {
    if (item.type === 'marker') this.markerSentAt.set(item.kind.token, performance.now());
    if (item.type !== 'change') return;
    const { kind, reason, object } = item.change;
    if (reason === 'delete') this.published.delete(key);
    else this.published.set(key, { kind, version: versionOf(object) });
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private settleIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
