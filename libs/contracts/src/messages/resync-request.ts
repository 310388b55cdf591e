// `rp.k8s.resync` (core NATS request/reply): a consumer that is about to act on its view asks the leading
// k8s-gateway for fresh resync markers, so it never starts from objects the API no longer has (ADR 0005).
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { RESOURCE_KINDS, SUBJECTS } from '../subjects.js';

const Kind = Type.Union(RESOURCE_KINDS.map((k) => Type.Literal(k)));

/** Version 1 of a resync request: the kinds whose markers the requester waits for. */
export const ResyncRequestV1 = Type.Object(
  { v: Type.Literal(1), kinds: Type.Array(Kind, { minItems: 1, maxItems: RESOURCE_KINDS.length }) },
  { additionalProperties: false },
);

/** Typed payload of {@link ResyncRequestV1}. */
export type ResyncRequestV1 = Static<typeof ResyncRequestV1>;

/** Version 1 of the reply: sent once the markers of those kinds are in the stream (or could not be sent). */
export const ResyncReplyV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** Kinds whose marker is now in RP_RESOURCES, behind every event the gateway sent before it. */
    published: Type.Array(Kind),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ResyncReplyV1}. */
export type ResyncReplyV1 = Static<typeof ResyncReplyV1>;

/** Contract of resync requests. */
export const resyncRequestContract = defineContract({
  name: 'resync-request',
  subject: SUBJECTS.resyncRequest,
  versions: { 1: ResyncRequestV1 },
});

/** Contract of resync replies (validated by the requester). */
export const resyncReplyContract = defineContract({
  name: 'resync-reply',
  subject: SUBJECTS.resyncRequest,
  versions: { 1: ResyncReplyV1 },
});
