// `rp.inspect.request`: the planner asks the inspector for a snapshot of one policy's managed scope.
// Core NATS request/reply (the answer is only useful to the waiting planner); large replies travel by reference.
// The connection travels sealed to the inspectors' installation key, never in clear (ADR 0024).
import { Type, type Static } from '@sinclair/typebox';
import {
  OBJECT_TYPES,
  PRIVILEGES,
  type ManagedScope,
  type ObjectType,
  type Privilege,
} from '@rolepolicy/policy';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { ObjectRef } from './common.js';
import { SealedV1 } from './secret-access.js';

/** A PostgreSQL identifier as the policy spells it (63 bytes is at most 63 characters). */
const Identifier = Type.String({ minLength: 1, maxLength: 63 });
const Identifiers = Type.Array(Identifier);
const ObjectTypeSchema = Type.Unsafe<ObjectType>({ type: 'string', enum: [...OBJECT_TYPES] });
const Privileges = Type.Array(Type.Unsafe<Privilege>({ type: 'string', enum: [...PRIVILEGES] }));

/** The spec's `connection.params` resolved to literals (the password is a secret: never log it). */
export const InspectConnectionParams = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.Null()])),
    dbname: Type.String({ minLength: 1, maxLength: 63 }),
    username: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 63 }), Type.Null()])),
    password: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
    sslMode: Type.Optional(
      Type.Union([
        Type.Unsafe<string>({
          type: 'string',
          enum: ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'],
        }),
        Type.Null(),
      ]),
    ),
    /** Cloud workload identity: the inspector gets a short-lived token from its provider (no secret here). */
    auth: Type.Optional(
      Type.Union([
        Type.Object(
          {
            type: Type.Literal('cloud_workload_identity'),
            impersonateServiceAccount: Type.Union([
              Type.String({ minLength: 1, maxLength: 253 }),
              Type.Null(),
            ]),
            scope: Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

const SetRole = Type.Optional(
  Type.Union([Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_$-]*$', maxLength: 63 }), Type.Null()]),
);

/**
 * Which parts of the connection were read from which Secret (names only): the inspector redacts those values
 * from its error messages, naming the Secret and key instead (ADR 0018).
 */
const SecretSources = Type.Optional(
  Type.Array(
    Type.Object(
      {
        part: Type.Unsafe<'url' | 'host' | 'port' | 'dbname' | 'username' | 'password' | 'sslMode'>({
          type: 'string',
          enum: ['url', 'host', 'port', 'dbname', 'username', 'password', 'sslMode'],
        }),
        secret: Type.String({ minLength: 1, maxLength: 253 }),
        key: Type.String({ minLength: 1, maxLength: 253 }),
      },
      { additionalProperties: false },
    ),
    { maxItems: 7 },
  ),
);

/**
 * The resolved connection: a URL (may carry credentials) or params, plus the optional `SET ROLE`.
 * Both shapes are secrets in transit; receivers must never log them.
 */
export const InspectConnection = Type.Union([
  Type.Object(
    { url: Type.String({ minLength: 1, maxLength: 4096 }), setRole: SetRole, secretSources: SecretSources },
    { additionalProperties: false },
  ),
  Type.Object(
    { params: InspectConnectionParams, setRole: SetRole, secretSources: SecretSources },
    { additionalProperties: false },
  ),
]);

/** Typed {@link InspectConnection}; assignable to libs/catalog's `ConnectionSpec`. */
export type InspectConnection = Static<typeof InspectConnection>;

/** The policy engine's `ManagedScope` as a wire schema (field for field). */
export const ManagedScopeSchema = Type.Object(
  {
    roles: Identifiers,
    membership_grantors: Identifiers,
    schemas: Identifiers,
    owned_schemas: Identifiers,
    wildcards: Type.Array(
      Type.Object(
        { grantee: Identifier, object_type: ObjectTypeSchema, schema: Identifier, privileges: Privileges },
        { additionalProperties: false },
      ),
    ),
    public_objects: Type.Array(
      Type.Object(
        {
          object_type: ObjectTypeSchema,
          schema: Type.Union([Identifier, Type.Null()]),
          name: Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()]),
          privileges: Privileges,
        },
        { additionalProperties: false },
      ),
    ),
    default_privilege_scopes: Type.Array(
      Type.Object(
        {
          owner: Identifier,
          scope: Type.Union([
            Type.Object({ type: Type.Literal('global') }, { additionalProperties: false }),
            Type.Object(
              { type: Type.Literal('schema'), schema: Identifier },
              { additionalProperties: false },
            ),
          ]),
          on_type: ObjectTypeSchema,
          public_privileges: Privileges,
        },
        { additionalProperties: false },
      ),
    ),
    include_database_privileges: Type.Boolean(),
    database_targets: Identifiers,
    function_signatures: Type.Array(
      Type.Object(
        { schema: Identifier, name: Type.String({ minLength: 1, maxLength: 1024 }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Typed {@link ManagedScopeSchema}: the engine's ManagedScope without `readonly`. */
export type ManagedScopePayload = Static<typeof ManagedScopeSchema>;

/**
 * The engine's ManagedScope as the request's `scope` (same fields; only `readonly` differs, and the
 * payload is never mutated). A received payload is usable as ManagedScope directly.
 */
export function managedScopePayload(scope: ManagedScope): ManagedScopePayload {
  return scope as ManagedScopePayload;
}

/**
 * Ask for the review facts too (libs/catalog `readReviewFactsIn`), read in the snapshot's transaction:
 * the executor's membership edges always, drop dependencies of `dropRoles`, which `predefinedRoles` exist.
 */
export const InspectReviewQuery = Type.Object(
  { dropRoles: Identifiers, predefinedRoles: Identifiers },
  { additionalProperties: false },
);

/** A catalog fingerprint (libs/catalog `readFingerprint`): `sha256:` and 64 lowercase hex digits. */
export const CatalogFingerprint = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' });

/** Version 1 of an inspection request. */
export const InspectRequestV1 = Type.Object(
  {
    v: Type.Literal(1),
    requestId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
    /** The policy (or candidate) whose connection and managed scope define what to read. */
    source: ObjectRef,
    generation: Type.Integer({ minimum: 0 }),
    /**
     * The resolved connection, sealed to the inspectors' public key (`INSPECT_SEAL_PUBLIC_KEY`): the
     * plaintext is an {@link InspectSealedConnectionV1}. Whoever sees the message sees ciphertext.
     */
    sealedConnection: SealedV1,
    scope: ManagedScopeSchema,
    /** Optional: also read the review facts (the reply then carries `reviewFacts`). */
    review: Type.Optional(InspectReviewQuery),
    /** Optional: the snapshot reply also carries the catalog fingerprint of the state it was read from. */
    withFingerprint: Type.Optional(Type.Boolean()),
    /**
     * Optional: the fingerprint recorded at the requester's last convergence. When the scope's fingerprint
     * still equals it, the reply is `unchanged` and nothing else is read (docs/inspector.md).
     */
    unlessFingerprint: Type.Optional(CatalogFingerprint),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link InspectRequestV1}. */
export type InspectRequestV1 = Static<typeof InspectRequestV1>;

/** What a request's `sealedConnection` opens to. */
export const InspectSealedConnectionV1 = Type.Object(
  { v: Type.Literal(1), connection: InspectConnection },
  { additionalProperties: false },
);

/** Typed payload of {@link InspectSealedConnectionV1}. */
export type InspectSealedConnectionV1 = Static<typeof InspectSealedConnectionV1>;

/** An inspection as its requester writes it: the request with the connection still in clear (never sent so). */
export type InspectQuery = Omit<InspectRequestV1, 'sealedConnection'> & {
  readonly connection: InspectConnection;
};

/** Contract of inspection requests. */
export const inspectRequestContract = defineContract({
  name: 'inspect-request',
  subject: SUBJECTS.inspectRequest,
  versions: { 1: InspectRequestV1 },
});

/** Contract of the sealed connection's plaintext (validated after opening, like a message). */
export const inspectSealedConnectionContract = defineContract({
  name: 'inspect-sealed-connection',
  subject: SUBJECTS.inspectRequest,
  versions: { 1: InspectSealedConnectionV1 },
});
