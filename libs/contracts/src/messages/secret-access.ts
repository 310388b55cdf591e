// `rp.k8s.secret.read` and `rp.k8s.secret.generate`: the only way Secret values reach a service. Core NATS
// request/reply answered by the k8s-gateway from the API's current object: nothing on these subjects is
// stored by any stream, and read replies are sealed to a key the requester made for that one request.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { KubeName } from './common.js';

/** A Secret key name (the API allows `[-._a-zA-Z0-9]+`, at most 253 characters). */
const SecretKeyName = Type.String({ minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z0-9]+$' });

/** An X25519 public key (SPKI DER, base64) or other base64 material of the seal. */
const Base64 = Type.String({ minLength: 1, maxLength: 1_048_576, pattern: '^[A-Za-z0-9+/]*={0,2}$' });

/** Version 1 of a Secret read. */
export const SecretReadRequestV1 = Type.Object(
  {
    v: Type.Literal(1),
    namespace: KubeName,
    /** Secrets to read, in the namespace of the object that names them. */
    names: Type.Array(KubeName, { maxItems: 64, uniqueItems: true }),
    /** Also read the literal `spec.connection.params.password` of this PostgresPolicy (never published). */
    literalPasswordOf: Type.Optional(KubeName),
    /** The requester's one-time X25519 public key; the reply's values are sealed to it. */
    replyKey: Base64,
  },
  { additionalProperties: false },
);
export type SecretReadRequestV1 = Static<typeof SecretReadRequestV1>;

/** A sealed box: X25519 with the responder's one-time key, HKDF-SHA-256, AES-256-GCM. */
export const SealedV1 = Type.Object(
  {
    alg: Type.Literal('x25519-hkdf-sha256-aes256gcm'),
    ephemeralKey: Base64,
    iv: Base64,
    tag: Base64,
    ciphertext: Base64,
  },
  { additionalProperties: false },
);
export type SealedV1 = Static<typeof SealedV1>;

/** Why a read or a generation was refused (messages name objects, never values). */
export const SecretAccessRefusal = Type.Object(
  {
    reason: Type.Union([
      Type.Literal('NotReferenced'),
      /** SECRET_READ_POLICY=labelled and the Secret lacks the `rolepolicy.io/readable: "true"` label. */
      Type.Literal('NotLabelled'),
      Type.Literal('InvalidRequest'),
      Type.Literal('ApiUnavailable'),
      Type.Literal('NotLeader'),
    ]),
    message: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type SecretAccessRefusal = Static<typeof SecretAccessRefusal>;

/** Version 1 of a Secret read reply. */
export const SecretReadReplyV1 = Type.Union([
  Type.Object(
    { v: Type.Literal(1), ok: Type.Literal(true), sealed: SealedV1 },
    { additionalProperties: false },
  ),
  Type.Object(
    { v: Type.Literal(1), ok: Type.Literal(false), error: SecretAccessRefusal },
    { additionalProperties: false },
  ),
]);
export type SecretReadReplyV1 = Static<typeof SecretReadReplyV1>;

/** One Secret as read from the API: identity and its `data` (base64 values). */
export const SecretValue = Type.Object(
  {
    name: KubeName,
    uid: Type.String({ maxLength: 128 }),
    resourceVersion: Type.String({ maxLength: 128 }),
    /** uid of the object controlling the Secret (its controller ownerReference), when it has one. */
    controllerUid: Type.Optional(Type.String({ maxLength: 128 })),
    data: Type.Record(Type.String(), Type.String()),
  },
  { additionalProperties: false },
);
export type SecretValue = Static<typeof SecretValue>;

/** What a sealed read reply holds once opened. */
export const SecretBundleV1 = Type.Object(
  {
    v: Type.Literal(1),
    secrets: Type.Array(SecretValue),
    /** Names asked for that the API does not have. */
    missing: Type.Array(KubeName),
    /** The literal connection password when `literalPasswordOf` was asked and the policy has one. */
    literalPassword: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type SecretBundleV1 = Static<typeof SecretBundleV1>;

/** An owner reference (the generated Secret must be controlled by a rolepolicy.io object). */
const OwnerReference = Type.Object(
  {
    apiVersion: Type.String({ minLength: 1, maxLength: 253 }),
    kind: Type.String({ minLength: 1, maxLength: 63 }),
    name: KubeName,
    uid: Type.String({ minLength: 1, maxLength: 128 }),
    controller: Type.Optional(Type.Boolean()),
    blockOwnerDeletion: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Version 1 of a generated-password Secret creation. */
export const SecretGenerateRequestV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** The Secret without data; the gateway draws the password and writes it (create-only). */
    template: Type.Object(
      {
        apiVersion: Type.Literal('v1'),
        kind: Type.Literal('Secret'),
        type: Type.Literal('Opaque'),
        metadata: Type.Object(
          {
            name: KubeName,
            namespace: KubeName,
            labels: Type.Optional(Type.Record(Type.String(), Type.String())),
            annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
            ownerReferences: Type.Array(OwnerReference, { minItems: 1, maxItems: 1 }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    secretKey: SecretKeyName,
    length: Type.Integer({ minimum: 16, maximum: 128 }),
  },
  { additionalProperties: false },
);
export type SecretGenerateRequestV1 = Static<typeof SecretGenerateRequestV1>;

/** Version 1 of a generation reply: the Secret's identity, never its value. */
export const SecretGenerateReplyV1 = Type.Union([
  Type.Object(
    {
      v: Type.Literal(1),
      ok: Type.Literal(true),
      /** False when the Secret existed already (its password is kept). */
      created: Type.Boolean(),
      uid: Type.String({ maxLength: 128 }),
      resourceVersion: Type.String({ maxLength: 128 }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { v: Type.Literal(1), ok: Type.Literal(false), error: SecretAccessRefusal },
    { additionalProperties: false },
  ),
]);
export type SecretGenerateReplyV1 = Static<typeof SecretGenerateReplyV1>;

export const secretReadRequestContract = defineContract({
  name: 'secret-read-request',
  subject: SUBJECTS.secretRead,
  versions: { 1: SecretReadRequestV1 },
});
export const secretReadReplyContract = defineContract({
  name: 'secret-read-reply',
  subject: SUBJECTS.secretRead,
  versions: { 1: SecretReadReplyV1 },
});
export const secretBundleContract = defineContract({
  name: 'secret-bundle',
  subject: SUBJECTS.secretRead,
  versions: { 1: SecretBundleV1 },
});
export const secretGenerateRequestContract = defineContract({
  name: 'secret-generate-request',
  subject: SUBJECTS.secretGenerate,
  versions: { 1: SecretGenerateRequestV1 },
});
export const secretGenerateReplyContract = defineContract({
  name: 'secret-generate-reply',
  subject: SUBJECTS.secretGenerate,
  versions: { 1: SecretGenerateReplyV1 },
});
