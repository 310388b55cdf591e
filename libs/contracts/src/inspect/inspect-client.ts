// The requester's side of `rp.inspect.request` (used by the planner and tests): seal the connection to the
// inspectors' key and send the request, then resolve the reply into a CatalogSnapshot, fetching it from the
// object store when it came by reference.
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import type { CatalogSnapshot } from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';
import { decodePayload, encodePayload } from '../contract.js';
import { inspectReplyContract, type InspectReplyV1 } from '../messages/inspect-reply.js';
import { inspectRequestContract, type InspectQuery } from '../messages/inspect-request.js';
import { sealInspectQuery } from '../secrets/inspect-seal.js';
import { SUBJECTS } from '../subjects.js';
import { traceHeaders } from '../tracing/trace-context.js';
import { SPAN_ATTRIBUTES, SpanKind, inSpan, tracingActive } from '../tracing/spans.js';

/** The inspector's classified, redacted error as its reply carries it. */
export type InspectFailure = Extract<InspectReplyV1, { status: 'error' }>['error'];

/**
 * A snapshot (and how it travelled; with the review facts of its transaction when the request asked)
 * or the inspector's classified, redacted error.
 */
export type SnapshotResult =
  | {
      readonly ok: true;
      readonly snapshot: CatalogSnapshot;
      readonly via: 'inline' | 'object';
      readonly reviewFacts?: ReviewFacts;
      /** The catalog fingerprint of the state the snapshot was read from, when the request asked. */
      readonly fingerprint?: string;
    }
  | { readonly ok: false; readonly error: InspectFailure };

/** What {@link requestSnapshotUnlessUnchanged} adds: the recorded fingerprint still holds, nothing was read. */
export type UnchangedResult = { readonly ok: true; readonly unchanged: true; readonly fingerprint: string };

/** Options of {@link requestSnapshot}. */
export type RequestSnapshotOptions = {
  /**
   * The inspectors' public key (`INSPECT_SEAL_PUBLIC_KEY`, base64 SPKI DER of an X25519 key): the
   * connection is sealed to it, so no credential crosses NATS in clear (ADR 0024).
   */
  readonly sealTo: string;
  readonly subject?: string;
  /** How long to wait for the reply; default 60 s (the catalog's statement timeout). */
  readonly timeoutMs?: number;
};

/**
 * Asks an inspector for a snapshot. A missing inspector or reply timeout is thrown (the NATS error);
 * an inspection failure is returned as `{ ok: false }`.
 */
export async function requestSnapshot(
  nats: NatsConnection,
  request: InspectQuery,
  options: RequestSnapshotOptions,
): Promise<SnapshotResult> {
  const { unlessFingerprint: _ignored, ...unconditional } = request;
  const result = await requestSnapshotUnlessUnchanged(nats, unconditional, options);
  if ('unchanged' in result) throw new Error('invalid inspect reply: unchanged to an unconditional request');
  return result;
}

/**
 * {@link requestSnapshot} for a request that may carry `unlessFingerprint`: the reply may also be that the
 * scope's fingerprint still equals it (then no snapshot was read).
 */
export async function requestSnapshotUnlessUnchanged(
  nats: NatsConnection,
  request: InspectQuery,
  options: RequestSnapshotOptions,
): Promise<SnapshotResult | UnchangedResult> {
  const subject = options.subject ?? SUBJECTS.inspectRequest;
  if (!tracingActive()) return requestOnce(nats, subject, request, options);
  const attributes = {
    [SPAN_ATTRIBUTES.kind]: request.source.kind,
    [SPAN_ATTRIBUTES.namespace]: request.source.namespace,
    [SPAN_ATTRIBUTES.name]: request.source.name,
    [SPAN_ATTRIBUTES.generation]: request.generation,
    [SPAN_ATTRIBUTES.messagingSystem]: 'nats',
    [SPAN_ATTRIBUTES.messagingDestination]: subject,
  };
  return inSpan('inspect request', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const result = await requestOnce(nats, subject, request, options);
    span?.setAttribute(
      SPAN_ATTRIBUTES.outcome,
      !result.ok ? 'error' : 'unchanged' in result ? 'unchanged' : result.via,
    );
    return result;
  });
}

async function requestOnce(
  nats: NatsConnection,
  subject: string,
  request: InspectQuery,
  options: RequestSnapshotOptions,
): Promise<SnapshotResult | UnchangedResult> {
  const headers = traceHeaders();
  const msg = await nats.request(
    subject,
    encodePayload(inspectRequestContract, sealInspectQuery(request, options.sealTo)),
    { timeout: options.timeoutMs ?? 60_000, ...(headers === undefined ? {} : { headers }) },
  );
  const decoded = decodePayload(inspectReplyContract, msg.data);
  if (!decoded.ok) throw new Error(`invalid inspect reply: ${decoded.detail}`);
  const reply = decoded.value;
  if (reply.status === 'unchanged') return { ok: true, unchanged: true, fingerprint: reply.fingerprint };
  if (reply.status === 'error') return { ok: false, error: reply.error };
  // The reply contract checks the envelope; the snapshot and review facts are typed by their payload
  // schemas as the inspector's own values (messages/inspect-reply.ts says why only their heads are checked).
  const extras = {
    ...(reply.reviewFacts === undefined ? {} : { reviewFacts: reply.reviewFacts }),
    ...(reply.fingerprint === undefined ? {} : { fingerprint: reply.fingerprint }),
  };
  switch (reply.status) {
    case 'inline':
      return { ok: true, snapshot: reply.snapshot, via: 'inline', ...extras };
    case 'object': {
      const bytes = await readStoredSnapshot(nats, reply.object.bucket, reply.object.name);
      if (bytes === null) {
        return {
          ok: false,
          error: { class: 'transient', code: null, message: 'stored snapshot expired before it was read' },
        };
      }
      return {
        ok: true,
        snapshot: JSON.parse(new TextDecoder().decode(bytes)) as CatalogSnapshot,
        via: 'object',
        ...extras,
      };
    }
    default: {
      const unreachable: never = reply;
      return unreachable;
    }
  }
}

/**
 * Reads a snapshot the inspector stored (the planner's side of an `object` reply).
 * @returns the JSON bytes, or null when the object expired or never existed
 */
export async function readStoredSnapshot(
  nats: NatsConnection,
  bucket: string,
  name: string,
): Promise<Uint8Array | null> {
  const store = await new Objm(nats).open(bucket);
  return store.getBlob(name);
}
