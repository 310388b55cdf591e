// Schema pieces shared by several payloads: Kubernetes object references and identifiers, and the class of a
// failure. Limits follow Kubernetes naming rules so a malformed reference is refused at the boundary.
import { Type, type Static } from '@sinclair/typebox';

/**
 * The class of every classified failure (inspection, execution, reconcile): `transient` retries with backoff,
 * `permanent` waits for the interval or an edit. Declared once here; payloads and the lifecycle use it.
 */
export const ErrorClassSchema = Type.Union([Type.Literal('transient'), Type.Literal('permanent')]);
export type ErrorClass = Static<typeof ErrorClassSchema>;

/** A Kubernetes object name or namespace (RFC 1123 subdomain, at most 253 characters). */
export const KubeName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
});

/** Reference to one namespaced Kubernetes object. */
export const ObjectRef = Type.Object(
  {
    apiVersion: Type.String({ minLength: 1, maxLength: 253 }),
    kind: Type.String({ minLength: 1, maxLength: 63 }),
    namespace: KubeName,
    name: KubeName,
    uid: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

/** Idempotency key of a command: resource uid + generation + digest, so redelivery is safe. */
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: 512 });

/** RFC 3339 timestamp set by the sender. */
export const Timestamp = Type.String({ format: 'date-time' });

/** A stream sequence of `RP_RESOURCES`: a positive integer (what a sender's cache had applied of a kind). */
export const StreamSequence = Type.Integer({ minimum: 1 });
