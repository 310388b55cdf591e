// `rp.execute.request`: an approved plan to apply; a JetStream work queue shared by executor replicas.
// The executor re-plans under the lock and refuses when the recomputed changeDigest differs.
import { Type, type Static } from '@sinclair/typebox';
import { RECONCILIATION_MODES, type ReconciliationMode } from '@rolepolicy/policy';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { IdempotencyKey, ObjectRef, StreamSequence } from './common.js';

const Digest = Type.String({ minLength: 1, maxLength: 128 });

/** Version 1 of an execution request (kept accepted; the executor refuses it: it cannot re-plan from it). */
export const ExecuteRequestV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** The PostgresPolicyPlan to apply. */
    plan: ObjectRef,
    /** The approved digest; execution proceeds only if the recomputed one is equal. */
    changeDigest: Digest,
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ExecuteRequestV1}. */
export type ExecuteRequestV1 = Static<typeof ExecuteRequestV1>;

/** Role name -> password source version (`secretName:secretKey:resourceVersion`); never a password. */
const SourceVersions = Type.Record(
  Type.String({ minLength: 1, maxLength: 63 }),
  Type.String({ minLength: 1, maxLength: 512 }),
);

/**
 * Per kind, the last `RP_RESOURCES` sequence of that kind the sender's cache had applied when it sent the
 * request: the receiver's cache has seen at least what the sender saw once it has applied as much.
 */
export const ResourceSequences = Type.Object(
  {
    postgrespolicy: Type.Optional(StreamSequence),
    postgrespolicyplan: Type.Optional(StreamSequence),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ResourceSequences}. */
export type ResourceSequences = Static<typeof ResourceSequences>;

/**
 * Version 2: everything the executor needs to re-plan under its lock, without any secret. The connection
 * and the role passwords are resolved by the executor from `target` and the source versions.
 */
export const ExecuteRequestV2 = Type.Object(
  {
    v: Type.Literal(2),
    plan: ObjectRef,
    /** The owning PostgresPolicy (uid included, so a recreated same-name policy is told apart). */
    policy: ObjectRef,
    changeDigest: Digest,
    /** Digests under different encodings are never comparable; the executor refuses a mismatch. */
    changeDigestEncoding: Type.String({ minLength: 1, maxLength: 128 }),
    idempotencyKey: IdempotencyKey,
    /**
     * The connection target reference the digest binds (`namespace/secret/key`, or the params form naming
     * literals or Secret references); never resolved values or credentials.
     */
    target: Type.String({ minLength: 1, maxLength: 1024 }),
    /** The policy content the plan was computed from (validated by the engine's expansion on receipt). */
    content: Type.Unknown(),
    mode: Type.Unsafe<ReconciliationMode>({ type: 'string', enum: [...RECONCILIATION_MODES] }),
    allowSchemaOwnerTransfers: Type.Boolean(),
    /** `spec.connection.requirePhysicalIdentity`. */
    requirePhysicalIdentity: Type.Boolean(),
    /** The identity the plan recorded (`targetPhysicalIdentity`, `targetLogicalFingerprint`). */
    approvedIdentity: Type.Object(
      {
        physical: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]),
        logical: Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    /** Current password source version per password-managed role. */
    passwordSources: SourceVersions,
    /** `status.applied_password_source_versions` of the policy when the plan was computed. */
    appliedPasswordSourceVersions: SourceVersions,
    /**
     * What the planner's cache had applied of policies and plans when it sent the request (optional: older
     * planners send none). The executor waits, without a round trip, until its own cache has applied as much
     * before its first read, instead of asking the server for the stream's last sequence (docs/executor.md).
     * An older executor refuses a request that carries it: upgrade the executor before the planner.
     */
    resourceSequences: Type.Optional(ResourceSequences),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ExecuteRequestV2}. */
export type ExecuteRequestV2 = Static<typeof ExecuteRequestV2>;

/** Contract of execution requests (v1 and v2 accepted). */
export const executeRequestContract = defineContract({
  name: 'execute-request',
  subject: SUBJECTS.executeRequest,
  versions: { 1: ExecuteRequestV1, 2: ExecuteRequestV2 },
});
