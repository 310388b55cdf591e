// The inspector's answer to `rp.inspect.request`: the snapshot inline, a reference into the JetStream
// object store when it is large, or a classified error whose message is already redacted.
import type { CatalogSnapshot } from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { ErrorClassSchema } from './common.js';
import { CatalogFingerprint } from './inspect-request.js';

/**
 * A CatalogSnapshot (libs/policy model). Only its head is checked on the wire; the inspector builds it
 * with libs/catalog and the receiver uses it as `CatalogSnapshot` (its digest, not its shape, is what is
 * trusted), so the schema declares that static type (`Type.Unsafe`: same JSON Schema, no cast at readers).
 */
export const SnapshotPayload = Type.Unsafe<CatalogSnapshot>(
  Type.Object(
    {
      server_version_num: Type.Integer({ minimum: 0 }),
      current_database: Type.String({ minLength: 1 }),
    },
    { additionalProperties: true },
  ),
);

/** Where a large snapshot was stored: JetStream object store bucket and object name (JSON, UTF-8). */
export const SnapshotObjectRef = Type.Object(
  {
    bucket: Type.String({ minLength: 1, maxLength: 128 }),
    name: Type.String({ minLength: 1, maxLength: 256 }),
    bytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/**
 * libs/review's ReviewFacts, read in the snapshot's transaction when the request asked (`review`). Only
 * the head is checked on the wire, like the snapshot; the receiver uses it as `ReviewFacts`.
 */
export const ReviewFactsPayload = Type.Unsafe<ReviewFacts>(
  Type.Object(
    {
      executor_memberships: Type.Array(Type.Object({}, { additionalProperties: true })),
      drop_roles: Type.Array(
        Type.Object({ role: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
      ),
      predefined_roles: Type.Array(Type.String({ minLength: 1 })),
    },
    { additionalProperties: false },
  ),
);

/** `transient`: retry later (connection refused, timeouts, SQLSTATE 08xxx, 57P0x, 53xxx); else `permanent`. */
export const InspectErrorClass = ErrorClassSchema;

/** Version 1 of an inspection reply. */
export const InspectReplyV1 = Type.Union([
  Type.Object(
    {
      v: Type.Literal(1),
      requestId: Type.String({ minLength: 1, maxLength: 128 }),
      status: Type.Literal('inline'),
      snapshot: SnapshotPayload,
      reviewFacts: Type.Optional(ReviewFactsPayload),
      /** With `withFingerprint`/`unlessFingerprint`: the fingerprint of the state the snapshot was read from. */
      fingerprint: Type.Optional(CatalogFingerprint),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      v: Type.Literal(1),
      requestId: Type.String({ minLength: 1, maxLength: 128 }),
      status: Type.Literal('object'),
      object: SnapshotObjectRef,
      reviewFacts: Type.Optional(ReviewFactsPayload),
      fingerprint: Type.Optional(CatalogFingerprint),
    },
    { additionalProperties: false },
  ),
  /** The scope's fingerprint equals the request's `unlessFingerprint`: no snapshot was read. */
  Type.Object(
    {
      v: Type.Literal(1),
      requestId: Type.String({ minLength: 1, maxLength: 128 }),
      status: Type.Literal('unchanged'),
      fingerprint: CatalogFingerprint,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      v: Type.Literal(1),
      requestId: Type.String({ maxLength: 128 }),
      status: Type.Literal('error'),
      error: Type.Object(
        {
          class: InspectErrorClass,
          /** SQLSTATE, Node error code (ECONNREFUSED), the inspector's own InvalidDatabaseTarget, or null. */
          code: Type.Union([Type.String({ maxLength: 32 }), Type.Null()]),
          /** Redacted: never a password or a URL with credentials. */
          message: Type.String({ maxLength: 4096 }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
]);

/** Typed payload of {@link InspectReplyV1}. */
export type InspectReplyV1 = Static<typeof InspectReplyV1>;

/**
 * Contract of inspection replies. They travel on the requester's inbox, so the subject is only a label;
 * the reply contract is not part of SPINE_CONTRACTS (no transport routes it by subject).
 */
export const inspectReplyContract = defineContract({
  name: 'inspect-reply',
  subject: `${SUBJECTS.inspectRequest}.reply`,
  versions: { 1: InspectReplyV1 },
});
