// ResourceCache: the latest object per (kind, namespace, name) as the k8s-gateway published it, read from
// RP_RESOURCES with one ordered (ephemeral) consumer per kind, LastPerSubject first, then every new event.
// Resync markers on the same stream drop whatever the API no longer has (ADR 0005).
import {
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerInfo,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Logger } from '@nestjs/common';
import { decodePayload } from '../contract.js';
import { resourceEventContract } from '../messages/resource-event.js';
import { resyncMarkerContract, type ResyncMarkerV1 } from '../messages/resync-marker.js';
import { RESYNC_TOKEN, SUBJECT_ROOT, parseResourceSubject, type ResourceKindToken } from '../subjects.js';
import { applyMarker, collectChunk, staleUpsert } from './resync.js';
import { STREAMS } from '../topology.js';
import { SharedRequest } from './shared-request.js';
import { AppliedSequences, type SequencesToApply } from './applied-sequences.js';
import { refreshMarkers } from './refresh.js';
import { IndexedObjects } from './indexed-objects.js';
import { fieldReadersOf, type FieldValues, type IndexedKind } from './indexed-fields.js';
import { carrierOf } from '../tracing/trace-context.js';
import {
  caughtUpWith,
  readiness,
  type Followed,
  type Listener,
  type Readiness,
  type RefreshOptions,
  type ResourceCacheOptions,
  type ResourceChange,
  type WireChange,
} from './cache-types.js';
import type { Cached } from './cached-kinds.js';

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Between two looks at the server's view while a first delivery has not said it is complete. */
const CONFIRM_INTERVAL_MS = 250;

/**
 * Read-only view of the cluster objects the k8s-gateway publishes, kept current from JetStream.
 * @example
 * const cache = await ResourceCache.start(nc, { kinds: ['secret', 'postgrespolicy'] });
 * await cache.ready;
 * const policy = cache.get('postgrespolicy', 'team-a', 'orders');
 */
export class ResourceCache {
  private readonly objects = new Map<ResourceKindToken, IndexedObjects>();
  private readonly listeners = new Set<Listener>();
  private readonly stops: (() => Promise<void>)[] = [];
  private readonly followed = new Map<ResourceKindToken, Followed>();
  private stopped = false;
  private cluster: string | undefined;
  private readyNow = false;
  /** The stream's last sequence, shared by concurrent {@link sync} callers (see {@link SharedRequest}). */
  private readonly lastSeq: SharedRequest<number>;
  /** The highest sequence applied per kind, and the callers of {@link reach} waiting for one. */
  private readonly sequences = new AppliedSequences();

  /** Resolves once every kind has delivered what the stream held when the cache started. */
  readonly ready: Promise<void>;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly options: {
      readonly kinds: readonly ResourceKindToken[];
      readonly stream: string;
      readonly subjectRoot: string;
      readonly pullExpiresMs: number | undefined;
    },
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
    kindsReady: readonly Readiness[],
  ) {
    for (const kind of options.kinds) this.objects.set(kind, new IndexedObjects(fieldReadersOf(kind)));
    this.lastSeq = new SharedRequest(async () => (await jsm.streams.info(options.stream)).state.last_seq);
    this.ready = Promise.all(kindsReady.map((r) => r.promise)).then(() => {
      this.readyNow = true;
      this.sequences.ready();
    });
    this.ready.catch(() => undefined);
  }

  /** True once {@link ready} has resolved: every kind delivered what the stream held at start. */
  get isReady(): boolean {
    return this.readyNow;
  }

  /** Creates the consumers and starts following; await {@link ready} before trusting reads. */
  static async start(nc: NatsConnection, options: ResourceCacheOptions): Promise<ResourceCache> {
    const resolved = {
      kinds: [...new Set(options.kinds)],
      stream: options.stream ?? STREAMS.resources,
      subjectRoot: options.subjectRoot ?? SUBJECT_ROOT,
      pullExpiresMs: options.pullExpiresMs,
    };
    const logger = options.logger ?? new Logger('ResourceCache');
    const kindsReady = resolved.kinds.map(() => readiness());
    // One manager for the cache's life: creating one asks the server for account info each time.
    const jsm = await jetstreamManager(nc);
    const cache = new ResourceCache(nc, jsm, resolved, logger, kindsReady);
    try {
      await jsm.streams.info(resolved.stream);
      for (const [i, kind] of resolved.kinds.entries()) await cache.follow(kind, kindsReady[i]!);
    } catch (error) {
      await cache.stop();
      throw error;
    }
    void cache.followReconnects();
    return cache;
  }

  /**
   * After the connection comes back, follows every kind again from the last message per subject. An
   * ordered consumer would notice the lost server-side consumer only after missed heartbeats (up to the
   * pull expiry, 30 s), and the work waiting on those events should resume within seconds.
   */
  private async followReconnects(): Promise<void> {
    try {
      for await (const status of this.nc.status()) {
        if (this.stopped) return;
        if (status.type !== 'reconnect') continue;
        for (const [kind, state] of this.followed) {
          // Bumped first, so the replaced loop ends without scheduling a resubscribe of its own.
          state.generation += 1;
          void state.messages?.close().catch(() => undefined);
          this.subscribe(kind, state, true, () => undefined).catch(() =>
            this.resubscribe(kind, state, 1_000),
          );
        }
      }
    } catch {
      // The connection closed: nothing more to follow.
    }
  }

  /** The latest object of that kind, namespace and name, or undefined when absent or deleted. */
  get<K extends ResourceKindToken>(kind: K, namespace: string, name: string): Cached<K> | undefined {
    return this.objects.get(kind)?.get(key(namespace, name)) as Cached<K> | undefined;
  }

  /** Every cached object of a kind, optionally in one namespace. */
  list<K extends ResourceKindToken>(kind: K, namespace?: string): readonly Cached<K>[] {
    const objects = this.objects.get(kind);
    if (objects === undefined) return [];
    return (namespace === undefined ? [...objects.values()] : objects.inNamespace(namespace)) as Cached<K>[];
  }
  /** The cached objects of a kind that an ownerReference names `ownerUid` (a policy's plans, say). */
  owned<K extends ResourceKindToken>(kind: K, ownerUid: string): readonly Cached<K>[] {
    return (this.objects.get(kind)?.ownedBy(ownerUid) ?? []) as Cached<K>[];
  }
  /** The cached object of a kind in `namespace` whose own uid is `uid` (a plan's owner policy, say). */
  withUid<K extends ResourceKindToken>(kind: K, namespace: string, uid: string): Cached<K> | undefined {
    return this.objects.get(kind)?.withUid(uid, namespace) as Cached<K> | undefined;
  }
  /** The cached objects of a kind in `namespace` with any wanted value of an indexed field (indexed-fields.ts). */
  withFields<K extends IndexedKind>(
    kind: K,
    namespace: string,
    wanted: FieldValues<K>,
  ): readonly Cached<K>[] {
    return (this.objects.get(kind)?.withFields(namespace, wanted) ?? []) as unknown as Cached<K>[];
  }

  /**
   * Asks the leading k8s-gateway (`<root>.k8s.resync`) for fresh resync markers of the followed kinds and
   * catches up with them, so the view holds only what the API has now. Call it before acting on the view
   * the first time. Keeps asking for `waitMs` while no gateway answers; then rejects, and the caller goes
   * on with the stream's view (the next marker corrects it).
   * @returns the kinds whose markers the gateway sent
   */
  refresh(options: RefreshOptions = {}): Promise<readonly ResourceKindToken[]> {
    return refreshMarkers(
      {
        nc: this.nc,
        subjectRoot: this.options.subjectRoot,
        kinds: this.options.kinds,
        sync: (timeoutMs) => this.sync(timeoutMs),
        isStopped: () => this.stopped,
      },
      options,
    );
  }

  /** Identity of the API the last complete resync marker came from (undefined before the first). */
  get clusterId(): string | undefined {
    return this.cluster;
  }

  /** Calls `listener` after every applied change; returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves once every event the stream held when it was called has been applied (read-your-writes for
   * a caller about to make a decision, e.g. under a database lock). Rejects after `timeoutMs` (the caller
   * retries later) or when the cache is stopped.
   *
   * Concurrent callers share their round trips (stream info, then per lagging kind consumer info) under
   * one rule: a caller uses only answers to requests sent after it was called, so no caller is answered
   * as of a moment before its call ({@link SharedRequest}).
   */
  async sync(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`resource cache not ready after ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.ready, late]);
    } finally {
      clearTimeout(timer);
    }
    const target = await this.lastSeq.sentAfterNow();
    for (const [kind, followed] of this.followed) {
      for (;;) {
        if (this.stopped) throw new Error('resource cache is stopped');
        if (followed.appliedSeq >= target) break;
        // Nothing of this kind left to deliver, and everything delivered is applied.
        const info = await followed.progress.sentAfterNow();
        // `delivered.stream_seq` also advances over other kinds' messages, so compare deliveries instead.
        if (info && caughtUpWith(followed, info, target)) break;
        if (Date.now() > deadline) {
          const server = info
            ? `server: pending ${info.num_pending}, delivered ${info.delivered.consumer_seq} by ${info.name}`
            : 'server: consumer info unavailable';
          throw new Error(
            `resource cache for ${kind} did not catch up in ${timeoutMs} ms (applied ${followed.appliedDelivery} by ${followed.appliedConsumer}; ${server})`,
          );
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }

  /** The highest `RP_RESOURCES` sequence of `kind` this cache has applied (0 before its first event). */
  appliedSequence(kind: ResourceKindToken): number {
    return this.sequences.of(kind);
  }

  /**
   * Resolves true once each listed kind has applied at least its sequence (what another service's cache
   * had seen, say), false after `timeoutMs` or once stopped. Asks the server nothing, unlike {@link sync}:
   * it promises "at least what that reader saw", not "everything stored now".
   */
  reach(sequences: SequencesToApply, timeoutMs: number): Promise<boolean> {
    return this.sequences.reach(sequences, timeoutMs);
  }

  /** Stops every consumer; reads keep answering from the last state. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.listeners.clear();
    this.sequences.stop();
    await Promise.all(this.stops.splice(0).map((stop) => stop()));
  }

  /** One ordered consumer per kind (nats-server 2.9 has no multi-filter consumers). */
  private async follow(
    kind: ResourceKindToken,
    readiness: { resolve: () => void; reject: (e: Error) => void },
  ): Promise<void> {
    const state: Followed = {
      consumer: undefined,
      messages: undefined,
      appliedSeq: 0,
      appliedConsumer: '',
      appliedDelivery: 0,
      generation: 0,
      marker: undefined,
      dropped: new Set(),
      lastMarker: undefined,
      held: new Map(),
      progress: new SharedRequest(() => this.consumerInfo(state)),
    };
    this.followed.set(kind, state);
    let caughtUp = false;
    this.stops.push(async () => {
      if (!caughtUp) readiness.reject(new Error(`resource cache stopped before ${kind} caught up`));
      await state.messages?.close().catch(() => undefined);
    });
    await this.subscribe(kind, state, false, () => {
      caughtUp = true;
      readiness.resolve();
    });
  }

  /**
   * Creates the kind's ordered consumer (LastPerSubject) and applies what it delivers. Ordered consumers
   * recreate themselves after a reconnect; if one gives up for good, the kind is followed again from the
   * last message per subject and objects whose subject no longer holds a message are dropped (`rebuild`).
   */
  private async subscribe(
    kind: ResourceKindToken,
    state: Followed,
    rebuild: boolean,
    onCaughtUp: () => void,
  ): Promise<void> {
    const prefix = `${this.options.subjectRoot}.resource.${kind}.`;
    // Everything up to here is what "caught up" means for this consumer (see scannedPast).
    const startSeq = await this.lastSeq.sentAfterNow();
    const consumer = await jetstream(this.nc).consumers.get(this.options.stream, {
      filter_subjects: `${prefix}>`,
      deliver_policy: DeliverPolicy.LastPerSubject,
    });
    const generation = ++state.generation;
    state.consumer = consumer;
    state.appliedSeq = 0;
    const seen = rebuild ? new Set<string>() : undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      if (seen) this.prune(kind, seen);
      onCaughtUp();
    };
    if ((await consumer.info(true)).num_pending === 0) finish();
    const expires = this.options.pullExpiresMs;
    const messages = await consumer.consume({
      max_messages: 256,
      ...(expires === undefined ? {} : { expires }),
    });
    state.messages = messages;
    if (!done) void this.confirmCaughtUp(state, generation, startSeq, () => done, finish);
    void (async () => {
      try {
        for await (const msg of messages) {
          // A replaced consumer's buffered messages are older than what its successor delivers.
          if (state.generation !== generation) break;
          const applied = this.apply(kind, prefix, msg);
          if (seen && applied) seen.add(applied);
          state.appliedSeq = msg.seq;
          this.sequences.applied(kind, msg.seq);
          state.appliedConsumer = msg.info.consumer;
          state.appliedDelivery = msg.info.deliverySequence;
          if (!done && msg.info.pending === 0) finish();
        }
      } catch (error) {
        if (!this.stopped) this.logger.warn(`resource cache for ${kind} failed: ${(error as Error).message}`);
      }
      if (!this.stopped && state.generation === generation) this.resubscribe(kind, state, 1_000);
    })();
  }

  /**
   * Finishes the first delivery by the server's view when the delivered messages' own pending count does
   * not reach zero: nats-server (2.9 file store) can count one message too many in a LastPerSubject
   * consumer's pending, for good, once a subject is superseded during the first delivery.
   */
  private async confirmCaughtUp(
    state: Followed,
    generation: number,
    startSeq: number,
    isDone: () => boolean,
    finish: () => void,
  ): Promise<void> {
    while (!isDone() && !this.stopped && state.generation === generation) {
      await new Promise((resolve) => setTimeout(resolve, CONFIRM_INTERVAL_MS).unref());
      const info = await state.progress.sentAfterNow().catch(() => undefined);
      if (info !== undefined && caughtUpWith(state, info, startSeq)) finish();
    }
  }

  /**
   * The server's info of the kind's current consumer, undefined while it has none or the server does not
   * answer. Asked by name (the consumer object's own info() would race with the ordered consumer's resets).
   */
  private async consumerInfo(state: Followed): Promise<ConsumerInfo | undefined> {
    const name = (await state.consumer?.info(true))?.name;
    if (name === undefined) return undefined;
    return this.jsm.consumers.info(this.options.stream, name).catch(() => undefined);
  }

  /** Follows the kind again after `delayMs`, doubling the delay (up to 30 s) while that fails. */
  private resubscribe(kind: ResourceKindToken, state: Followed, delayMs: number): void {
    this.logger.warn(`resource cache for ${kind} lost its consumer; following again in ${delayMs} ms`);
    setTimeout(() => {
      if (this.stopped) return;
      this.subscribe(kind, state, true, () => undefined).catch(() =>
        this.resubscribe(kind, state, Math.min(delayMs * 2, 30_000)),
      );
    }, delayMs).unref();
  }

  /** After a rebuild: drops objects whose subject held no message any more. */
  private prune(kind: ResourceKindToken, seen: ReadonlySet<string>): void {
    const byName = this.objects.get(kind)!;
    for (const [k, object] of byName) {
      if (seen.has(k)) continue;
      byName.delete(k);
      this.notify({ type: 'delete', kind, namespace: object.metadata.namespace, name: object.metadata.name });
    }
  }

  /** Applies one event; invalid ones are skipped with a warning that names the subject only. */
  private apply(kind: ResourceKindToken, prefix: string, msg: JsMsg): string | undefined {
    const rest = msg.subject.startsWith(prefix) ? msg.subject.slice(prefix.length).split('.') : [];
    if (rest[0] === RESYNC_TOKEN) {
      this.applyMarkerChunk(kind, msg);
      return undefined;
    }
    const parts = parseResourceSubject(msg.subject, this.options.subjectRoot);
    if (!parts || parts.kind !== kind) {
      this.logger.warn(`resource cache skipped an event on unexpected subject ${msg.subject}`);
      return undefined;
    }
    const { namespace, name } = parts;
    const decoded = decodePayload(resourceEventContract, msg.data);
    if (!decoded.ok) {
      this.logger.warn(`resource cache skipped an invalid event on ${msg.subject}: ${decoded.detail}`);
      return undefined;
    }
    const event = decoded.value;
    const byName = this.objects.get(kind)!;
    const state = this.followed.get(kind);
    if (event.type === 'upsert' && staleUpsert(state, event.object.metadata)) {
      // Older than the last marker, which did not list it (e.g. a publish held up past a re-list).
      state?.held.set(key(namespace, name), event.object);
      return key(namespace, name);
    }
    state?.held.delete(key(namespace, name));
    if (event.type === 'delete') {
      byName.delete(key(namespace, name));
    } else {
      byName.set(key(namespace, name), event.object);
    }
    const trace = carrierOf(msg.headers); // continued by the pass the change wakes (docs/tracing.md)
    const change: WireChange =
      event.type === 'delete'
        ? { type: 'delete', kind, namespace, name }
        : { type: 'upsert', kind, namespace, name, object: event.object };
    this.notify(trace === undefined ? change : { ...change, trace });
    return key(namespace, name);
  }

  /** Collects one chunk of a kind's resync marker; a complete marker drops what the API no longer has. */
  private applyMarkerChunk(kind: ResourceKindToken, msg: JsMsg): void {
    const decoded = decodePayload(resyncMarkerContract, msg.data);
    if (!decoded.ok || decoded.value.kind !== kind) {
      const detail = decoded.ok ? `it is for ${decoded.value.kind}` : decoded.detail;
      this.logger.warn(`resource cache skipped an invalid resync marker on ${msg.subject}: ${detail}`);
      return;
    }
    const state = this.followed.get(kind)!;
    const collected = collectChunk(state.marker, decoded.value as ResyncMarkerV1);
    state.marker = collected.assembly;
    if (collected.complete === undefined) return;
    const marker = collected.complete;
    if (this.cluster !== undefined && this.cluster !== marker.clusterId) {
      this.logger.log(`resource cache: ${kind} now comes from another API; dropping what the old one had`);
    }
    this.cluster = marker.clusterId;
    const byName = this.objects.get(kind)!;
    const verdict = applyMarker(byName, marker);
    state.dropped = verdict.droppedUids;
    state.lastMarker = marker;
    const held = [...state.held];
    state.held.clear();
    for (const k of verdict.dropped) {
      const object = byName.get(k)!;
      byName.delete(k);
      this.notify({ type: 'delete', kind, namespace: object.metadata.namespace, name: object.metadata.name });
    }
    for (const [k, object] of held) {
      const uid = (object.metadata as { uid?: unknown }).uid;
      if (typeof uid !== 'string' || !marker.listed.has(uid)) continue;
      byName.set(k, object);
      const { namespace, name } = object.metadata;
      this.notify({ type: 'upsert', kind, namespace, name, object });
    }
  }

  /**
   * Tells the listeners. Typed by kind here, once: every object was decoded against the resource-event
   * contract and filed under the kind of its subject (cached-kinds.ts says what that guarantees).
   */
  private notify(wire: WireChange): void {
    const change = wire as ResourceChange;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        const where = `${change.kind} ${change.namespace}/${change.name}`;
        this.logger.warn(`resource cache listener failed on ${where}: ${(error as Error).message}`);
      }
    }
  }
}
