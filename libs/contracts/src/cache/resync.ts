// Pure parts of resync markers: splitting the listed objects into chunks that fit a NATS message,
// assembling the chunks of one marker, and which cached objects a complete marker drops (ADR 0005).
import type { ResyncMarkerV1 } from '../messages/resync-marker.js';

/** One listed object. */
export type Listed = ResyncMarkerV1['objects'][number];

/** A complete marker: every object the API had of the kind, by uid. */
export type CompleteMarker = {
  readonly clusterId: string;
  /** Set when the marker covers one namespace only. */
  readonly namespace: string | undefined;
  readonly resyncId: string;
  /** uid -> resourceVersion. */
  readonly listed: ReadonlyMap<string, string>;
  /** The resourceVersion up to which the list is current, when the gateway sent one. */
  readonly listResourceVersion: string | undefined;
};

/** Chunks of one marker received so far. */
export type MarkerAssembly = {
  readonly resyncId: string;
  readonly clusterId: string;
  readonly namespace: string | undefined;
  readonly listResourceVersion: string | undefined;
  readonly chunks: number;
  readonly received: ReadonlyMap<number, readonly Listed[]>;
};

/**
 * Adds a chunk. A chunk of another marker replaces what was collected: markers arrive in stream order, so
 * the older marker's missing chunks will never come (they were replaced on their subjects by newer ones).
 */
export function collectChunk(
  assembly: MarkerAssembly | undefined,
  chunk: ResyncMarkerV1,
): { readonly assembly: MarkerAssembly | undefined; readonly complete?: CompleteMarker } {
  const base: MarkerAssembly =
    assembly !== undefined && assembly.resyncId === chunk.resyncId && assembly.chunks === chunk.chunks
      ? assembly
      : {
          resyncId: chunk.resyncId,
          clusterId: chunk.clusterId,
          namespace: chunk.namespace,
          listResourceVersion: chunk.listResourceVersion,
          chunks: chunk.chunks,
          received: new Map(),
        };
  if (chunk.chunk >= chunk.chunks) return { assembly: base };
  const received = new Map(base.received);
  received.set(chunk.chunk, chunk.objects);
  if (received.size < base.chunks) return { assembly: { ...base, received } };
  const listed = new Map<string, string>();
  for (const objects of received.values()) for (const o of objects) listed.set(o.uid, o.resourceVersion);
  const complete = {
    clusterId: base.clusterId,
    namespace: base.namespace,
    resyncId: base.resyncId,
    listResourceVersion: base.listResourceVersion,
    listed,
  };
  return { assembly: undefined, complete };
}

/** What a complete marker does to a kind's cached objects: keys to drop and the uids they had. */
export function applyMarker(
  cached: ReadonlyMap<string, { readonly metadata: { readonly namespace?: string; readonly uid?: unknown } }>,
  marker: Pick<CompleteMarker, 'listed' | 'namespace'>,
): { readonly dropped: readonly string[]; readonly droppedUids: ReadonlySet<string> } {
  const { listed, namespace } = marker;
  const dropped: string[] = [];
  const droppedUids = new Set<string>();
  for (const [key, object] of cached) {
    if (namespace !== undefined && object.metadata.namespace !== namespace) continue;
    const uid = object.metadata.uid;
    if (typeof uid === 'string' && listed.has(uid)) continue;
    dropped.push(key);
    if (typeof uid === 'string') droppedUids.add(uid);
  }
  return { dropped, droppedUids };
}

/**
 * True when an event arriving after `marker` is older than it: the object was not listed, and its
 * resourceVersion is not newer than the list's. resourceVersions are compared only when both are integers
 * (etcd revisions, as every API server in use gives; otherwise nothing is called stale).
 */
export function olderThanMarker(
  marker: Pick<CompleteMarker, 'listed' | 'listResourceVersion' | 'namespace'>,
  object: { readonly uid?: unknown; readonly resourceVersion?: unknown; readonly namespace?: unknown },
): boolean {
  if (marker.namespace !== undefined && object.namespace !== marker.namespace) return false;
  if (typeof object.uid === 'string' && marker.listed.has(object.uid)) return false;
  const digits = /^[0-9]{1,30}$/;
  const [rv, listRv] = [object.resourceVersion, marker.listResourceVersion];
  if (typeof rv !== 'string' || listRv === undefined || !digits.test(rv) || !digits.test(listRv))
    return false;
  return BigInt(rv) <= BigInt(listRv);
}

/** True when an upsert is about an object the last marker dropped, or is older than that marker. */
export function staleUpsert(
  state:
    { readonly dropped: ReadonlySet<string>; readonly lastMarker: CompleteMarker | undefined } | undefined,
  metadata: object,
): boolean {
  const meta = metadata as { uid?: unknown; resourceVersion?: unknown; namespace?: unknown };
  if (state === undefined || state.lastMarker === undefined) return false;
  if (typeof meta.uid === 'string' && state.dropped.has(meta.uid)) return true;
  return olderThanMarker(state.lastMarker, meta);
}

/** Bytes of one listed entry in JSON at most (uid 128 + resourceVersion 64 + keys and quotes). */
const ENTRY_BYTES = 220;
/** Room for the rest of a chunk (kind, ids, timestamps, JSON keys). */
const ENVELOPE_BYTES = 1_024;

/**
 * Splits the listed objects into chunks whose JSON stays under `maxPayloadBytes` (the server's
 * max_payload, 1 MiB by default). Always at least one chunk, so an empty kind still gets a marker.
 * @example chunkListed(objects, 1_048_576).length // 1 for up to ~4700 objects
 */
export function chunkListed(objects: readonly Listed[], maxPayloadBytes: number): Listed[][] {
  const perChunk = Math.max(1, Math.floor((maxPayloadBytes - ENVELOPE_BYTES) / ENTRY_BYTES));
  const chunks: Listed[][] = [];
  for (let i = 0; i < objects.length; i += perChunk) chunks.push(objects.slice(i, i + perChunk));
  return chunks.length === 0 ? [[]] : chunks;
}
