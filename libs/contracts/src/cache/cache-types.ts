// The types of ResourceCache and its catching-up rule: what a listener receives, the options, the
// per-kind following state, and when a consumer counts as caught up (caught-up.spec.ts).
import type { Consumer, ConsumerInfo, ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from '@nestjs/common';
import type { ResourceEventV1 } from '../messages/resource-event.js';
import type { ResourceKindToken } from '../subjects.js';
import type { Cached } from './cached-kinds.js';
import type { CompleteMarker, MarkerAssembly } from './resync.js';
import type { SharedRequest } from './shared-request.js';
import type { TraceCarrier } from '../tracing/trace-context.js';

/** A Kubernetes object as published in a resource event (Secrets included: never log one). */
export type CachedObject = ResourceEventV1['object'];

/** What changed in the cache, typed by kind (narrow on `kind`); `object` is absent on `delete`. */
export type ResourceChange = {
  readonly [K in ResourceKindToken]: {
    readonly type: 'upsert' | 'delete';
    readonly kind: K;
    readonly namespace: string;
    readonly name: string;
    readonly object?: Cached<K>;
    /** The trace context the event carried (tracing on only; docs/tracing.md). */
    readonly trace?: TraceCarrier;
  };
}[ResourceKindToken];

/** Options of {@link ResourceCache.start}. */
export type ResourceCacheOptions = {
  /** Kinds to follow; one ordered consumer per kind on `<root>.resource.<kind>.>`. */
  readonly kinds: readonly ResourceKindToken[];
  /** Stream holding the events; default `RP_RESOURCES` (sandboxes pass their own). */
  readonly stream?: string;
  /** Subject root; default `rp` (sandboxes pass e.g. `sbx_<id>`). */
  readonly subjectRoot?: string;
  /** Where warnings go; default a Nest logger named `ResourceCache`. Never receives object contents. */
  readonly logger?: Pick<Logger, 'warn' | 'log'>;
  /** Lifetime of each pull request before it is renewed (nats.js default 30 s; at least 1 s). */
  readonly pullExpiresMs?: number;
};

/** Options of {@link ResourceCache.refresh}. */
export type RefreshOptions = {
  /** How long to keep asking while no gateway answers (it may be starting too); default 10 s. */
  readonly waitMs?: number;
  /** Timeout of one request, and of catching up afterwards; default 5 s. */
  readonly timeoutMs?: number;
};

export type Listener = (change: ResourceChange) => void;

/** A change as the cache files it, before it is typed by kind for the listeners. */
export type WireChange = {
  readonly type: 'upsert' | 'delete';
  readonly kind: ResourceKindToken;
  readonly namespace: string;
  readonly name: string;
  readonly object?: CachedObject;
  readonly trace?: TraceCarrier;
};

/** Per kind: its current consumer and message stream, and the stream sequence of the last event applied. */
export type Followed = {
  consumer: Consumer | undefined;
  messages: ConsumerMessages | undefined;
  /** Stream sequence of the last event applied. */
  appliedSeq: number;
  /** Consumer name and delivery sequence of the last event applied. */
  appliedConsumer: string;
  appliedDelivery: number;
  /** Bumped on every (re)subscription, so only the current consumer's end triggers a resubscribe. */
  generation: number;
  /** Chunks of the resync marker being received. */
  marker: MarkerAssembly | undefined;
  /** Uids the last complete marker dropped: a late event about one of them is older than the marker. */
  dropped: ReadonlySet<string>;
  /** The last complete marker, against which later events are checked for being older. */
  lastMarker: CompleteMarker | undefined;
  /**
   * Upserts that looked older than the last marker, by key. Most are stale; but a new API's objects can
   * carry lower resourceVersions than the old API's marker, so the next marker applies those it lists.
   */
  held: Map<string, CachedObject>;
  /** The server's view of the kind's current consumer, shared by the {@link ResourceCache.sync} waiters. */
  progress: SharedRequest<ConsumerInfo | undefined>;
};

/** A kind's first delivery: resolved once it caught up, rejected when the cache stops before. */
export type Readiness = {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (e: Error) => void;
};

/** A new, unsettled {@link Readiness}. */
export function readiness(): Readiness {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What a kind has applied: the consumer and delivery sequence of its last event. */
export type Applied = Pick<Followed, 'appliedConsumer' | 'appliedDelivery'>;

/**
 * True when everything consumer `name` delivered (`delivered` messages) has been applied. The iterator
 * yields in delivery order, so anything a replaced consumer delivered was applied before this consumer's
 * deliveries. (nats.js's `getPending()` is no help here: it stays above zero after a batch that carried a
 * status callback, which left a quiet kind "not caught up" until its next event.)
 */
function appliedAll(state: Applied, name: string, delivered: number): boolean {
  return delivered === 0 || (state.appliedConsumer === name && state.appliedDelivery >= delivered);
}

/**
 * True when the consumer has delivered everything of its kind up to stream sequence `target` and all of it
 * is applied. The server's pending count says so when it reaches zero; its scan position says so too, and
 * is what counts when the pending count is one too many (see {@link ResourceCache} `confirmCaughtUp`).
 */
export function caughtUpWith(
  state: Applied,
  info: {
    readonly name: string;
    readonly num_pending: number;
    readonly delivered: { readonly stream_seq: number; readonly consumer_seq: number };
  },
  target: number,
): boolean {
  if (!appliedAll(state, info.name, info.delivered.consumer_seq)) return false;
  return info.num_pending === 0 || info.delivered.stream_seq >= target;
}
