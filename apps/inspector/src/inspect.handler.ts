// The inspector's one job, kept thin: decode the request, run libs/catalog's inspect() on the target's
// pooled connection, encode the reply (inline, or by object-store reference when large, or a classified error).
import { trace } from '@opentelemetry/api';
import {
  connectionSecrets,
  inspect,
  inspectUnlessUnchanged,
  inspectWithReviewFacts,
  withRedaction,
  type ConnectionSpec,
  type Secret,
} from '@rolepolicy/catalog';
import {
  SPAN_ATTRIBUTES,
  decodePayload,
  encodePayload,
  inspectReplyContract,
  inspectRequestContract,
  openInspectConnection,
  type InspectReplyV1,
  type ReplyKeyPair,
} from '@rolepolicy/contracts';
import { classifyError } from './classify-error.js';
import type { SnapshotStore } from './snapshot-store.js';
import type { TargetPools } from './target-pools.js';

/** What the handler needs besides the request bytes. */
export type InspectDeps = {
  readonly pools: TargetPools;
  readonly store: SnapshotStore;
  /** Snapshots whose JSON is larger than this many bytes go to the object store. */
  readonly inlineMaxBytes: number;
  /** The inspectors' installation key pair (INSPECT_SEAL_PRIVATE_KEY): opens each request's connection. */
  readonly sealKeys: ReplyKeyPair;
};

/** How a request ended, for metrics: the reply status, with errors split by class. */
export type InspectOutcome = 'inline' | 'object' | 'unchanged' | 'transient' | 'permanent';

/** The encoded reply and its outcome. */
export type InspectAnswer = { readonly bytes: Uint8Array; readonly outcome: InspectOutcome };

/** SQLSTATE classes after which a pool is useless as it is: connection failure (08), credentials (28), no database (3D). */
const DROP_POOL_CLASSES = ['08', '28', '3D'];

/**
 * Answers one request. Never throws: every failure becomes an `error` reply whose message is redacted
 * of the request's connection secrets.
 */
export async function handleInspectRequest(data: Uint8Array, deps: InspectDeps): Promise<InspectAnswer> {
  const decoded = decodePayload(inspectRequestContract, data);
  if (!decoded.ok) {
    // The decode detail names paths and rules only, never values.
    return reply({
      v: 1,
      requestId: requestIdOf(data),
      status: 'error',
      error: { class: 'permanent', code: decoded.reason, message: decoded.detail },
    });
  }
  const request = decoded.value;
  // The span of this read names what it reads (never the connection; docs/tracing.md).
  trace.getActiveSpan()?.setAttributes({
    [SPAN_ATTRIBUTES.kind]: request.source.kind,
    [SPAN_ATTRIBUTES.namespace]: request.source.namespace,
    [SPAN_ATTRIBUTES.name]: request.source.name,
    [SPAN_ATTRIBUTES.generation]: request.generation,
  });
  const opened = openInspectConnection(request, deps.sealKeys);
  if (!opened.ok) {
    return reply({
      v: 1,
      requestId: request.requestId,
      status: 'error',
      error: { class: 'permanent', code: 'SealedConnectionRefused', message: opened.message },
    });
  }
  const spec: ConnectionSpec = opened.connection;
  // Before a pool exists (openConnection can refuse the spec itself), then the pool's (tokens too).
  let secrets: readonly Secret[] = connectionSecrets(spec);
  // The operator's cloud identity bounds may be per namespace: the policy's, never one the request names apart.
  const namespace = request.source.namespace;
  try {
    return await deps.pools.use(spec, namespace, async (connection) => {
      secrets = connection.secrets;
      // With `review`, the review facts come from the snapshot's own transaction (one instant for both); with a
      // fingerprint asked for, so does the fingerprint, which alone answers when it equals `unlessFingerprint`.
      const query = request.review;
      const read = await withRedaction(connection, async () => {
        if (request.withFingerprint === true || request.unlessFingerprint !== undefined) {
          return inspectUnlessUnchanged(connection.db, request.scope, connection.target, {
            ...(request.unlessFingerprint === undefined ? {} : { unless: request.unlessFingerprint }),
            ...(query === undefined ? {} : { review: query }),
          });
        }
        return query === undefined
          ? {
              kind: 'snapshot' as const,
              snapshot: await inspect(connection.db, request.scope, connection.target),
              fingerprint: null,
            }
          : {
              kind: 'snapshot' as const,
              fingerprint: null,
              ...(await inspectWithReviewFacts(connection.db, request.scope, connection.target, query)),
            };
      });
      if (read.kind === 'unchanged') {
        return reply({
          v: 1,
          requestId: request.requestId,
          status: 'unchanged',
          fingerprint: read.fingerprint,
        });
      }
      const { snapshot, facts } = read;
      const reviewFacts = {
        ...(facts === undefined ? {} : { reviewFacts: facts as never }),
        ...(read.fingerprint === null ? {} : { fingerprint: read.fingerprint }),
      };
      const json = new TextEncoder().encode(JSON.stringify(snapshot));
      if (json.byteLength <= deps.inlineMaxBytes) {
        return reply({ v: 1, requestId: request.requestId, status: 'inline', snapshot, ...reviewFacts });
      }
      const name = `snapshot/${request.requestId}`;
      await deps.store.put(name, json);
      return reply({
        v: 1,
        requestId: request.requestId,
        status: 'object',
        object: { bucket: deps.store.bucket, name, bytes: json.byteLength },
        ...reviewFacts,
      });
    });
  } catch (error) {
    const classified = classifyError(error, secrets);
    if (classified.code !== null && DROP_POOL_CLASSES.some((prefix) => classified.code!.startsWith(prefix))) {
      deps.pools.evict(spec, namespace);
    }
    return reply({ v: 1, requestId: request.requestId, status: 'error', error: classified });
  }
}

function reply(payload: InspectReplyV1): InspectAnswer {
  const outcome = payload.status === 'error' ? payload.error.class : payload.status;
  return { bytes: encodePayload(inspectReplyContract, payload), outcome };
}

/** Echoes a well-formed requestId from an invalid request so the sender can match the refusal. */
function requestIdOf(data: Uint8Array): string {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(data));
    const id =
      typeof parsed === 'object' && parsed !== null ? (parsed as { requestId?: unknown }).requestId : null;
    return typeof id === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(id) ? id : '';
  } catch {
    return '';
  }
}
