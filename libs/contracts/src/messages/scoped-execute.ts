// `rp.execute.scoped.*`: ephemeral access plans (spec.scope Activate/Revoke) sent by the access-scheduler to
// the executor, and what the executor did (ADR 0008). No connection and no secret ever travels here: the
// executor resolves the target from the cluster, and the statements are membership grants only.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { IdempotencyKey, ObjectRef, StreamSequence, Timestamp } from './common.js';

const RoleName = Type.String({ minLength: 1, maxLength: 63 });
const Digest = Type.String({ minLength: 1, maxLength: 71 });

/**
 * What a scoped execution does. `Sweep` (ADR 0020, "The sweep") revokes the edges of bundle roles to the
 * target's roles that neither the target declares nor an anchored request holds; it has no plan and no
 * request: `plan` and `request` repeat the target policy, and `bundleHash` is {@link SWEEP_BUNDLE}.
 */
export const SCOPE_OPERATIONS = ['Activate', 'Revoke', 'Sweep'] as const;

/** The `bundleHash` of a Sweep request (it covers every bundle of the target). */
export const SWEEP_BUNDLE = 'sweep';

const Operation = Type.Unsafe<(typeof SCOPE_OPERATIONS)[number]>({
  type: 'string',
  enum: [...SCOPE_OPERATIONS],
});

/** One membership of a bundle: `member` in `role`, never with ADMIN. */
export const ScopedMembership = Type.Object(
  { role: RoleName, member: RoleName, inherit: Type.Boolean() },
  { additionalProperties: false },
);

/**
 * Per kind the executor's scoped verification reads, the last `RP_RESOURCES` sequence of that kind the
 * sender's cache had applied when it sent the request (ADR 0030, amended): the executor's cache holds at least what
 * the sender saw once it has applied as much.
 */
export const ScopedResourceSequences = Type.Object(
  {
    postgrespolicy: Type.Optional(StreamSequence),
    postgrespolicyplan: Type.Optional(StreamSequence),
    ephemeralaccessrequest: Type.Optional(StreamSequence),
    ephemeralaccesspolicy: Type.Optional(StreamSequence),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ScopedResourceSequences}. */
export type ScopedResourceSequences = Static<typeof ScopedResourceSequences>;

/** Version 1 of a scoped execution request. */
export const ScopedExecuteRequestV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** The scoped PostgresPolicyPlan, created (phase Applying) before this request is sent. */
    plan: ObjectRef,
    /** The EphemeralAccessRequest (uid required: the plan's origin must name it). */
    request: ObjectRef,
    /** The target PostgresPolicy (uid required: the snapshot's targetPolicyUid). */
    policy: ObjectRef,
    operation: Operation,
    bundleHash: Digest,
    /** `<request uid>/<operation>/<bundleHash>`. */
    idempotencyKey: IdempotencyKey,
    /**
     * What the access-scheduler's cache had applied of the kinds the executor verifies against when it sent
     * the request (optional: older schedulers send none, and the executor syncs instead). The executor's
     * reads before its lock wait, without a round trip, until its own cache has applied as much. An older
     * executor refuses a request that carries it: upgrade the executor before the access-scheduler.
     */
    resourceSequences: Type.Optional(ScopedResourceSequences),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ScopedExecuteRequestV1}. */
export type ScopedExecuteRequestV1 = Static<typeof ScopedExecuteRequestV1>;

/** Contract of scoped execution requests. */
export const scopedExecuteRequestContract = defineContract({
  name: 'scoped-execute-request',
  subject: SUBJECTS.scopedExecuteRequest,
  versions: { 1: ScopedExecuteRequestV1 },
});

/**
 * Contract of scoped revocations and sweeps on their own subject (same payload; the executor refuses an
 * Activate there). Revokes are consumed by their own durable, ahead of activations (ADR 0013).
 */
export const scopedRevokeRequestContract = defineContract({
  name: 'scoped-revoke-request',
  subject: SUBJECTS.scopedRevokeRequest,
  versions: { 1: ScopedExecuteRequestV1 },
});

/**
 * The subject a scoped execution request of `operation` is sent on: revokes and sweeps (which only ever
 * remove memberships) have their own, ahead of activations.
 */
export function scopedRequestSubject(operation: (typeof SCOPE_OPERATIONS)[number]): string {
  return operation === 'Activate' ? SUBJECTS.scopedExecuteRequest : SUBJECTS.scopedRevokeRequest;
}

/**
 * `Applied`: the memberships are as the operation wants them (statements ran in one transaction, or none
 * were needed). `Failed`: a definitive refusal or a failed transaction; nothing was applied. `Blocked`:
 * not possible now (the target's fingerprint changed, for example); the sender keeps the request where it
 * is and asks again later. Transient trouble (lock contention, database unreachable) is not reported: the
 * executor retries it through redelivery.
 */
export const SCOPED_OUTCOMES = ['Applied', 'Failed', 'Blocked'] as const;

/** Version 1 of a scoped execution result. */
export const ScopedExecuteResultV1 = Type.Object(
  {
    v: Type.Literal(1),
    plan: ObjectRef,
    request: ObjectRef,
    policy: ObjectRef,
    operation: Operation,
    bundleHash: Digest,
    idempotencyKey: IdempotencyKey,
    outcome: Type.Unsafe<(typeof SCOPED_OUTCOMES)[number]>({ type: 'string', enum: [...SCOPED_OUTCOMES] }),
    /** The membership statements that ran (empty when none were needed or nothing ran). */
    statements: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 64 }),
    /** Edges a Revoke kept because the base policy declares them (`retainedMemberships`). */
    retained: Type.Array(ScopedMembership, { maxItems: 32 }),
    /** PascalCase, e.g. `MembershipsGranted`, `MembershipsRevoked`, `AlreadyDurable`, `TargetFingerprintChanged`. */
    reason: Type.String({ minLength: 1, maxLength: 128 }),
    /** Human-readable; never a secret. */
    message: Type.String({ maxLength: 4096 }),
    reportedAt: Timestamp,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ScopedExecuteResultV1}. */
export type ScopedExecuteResultV1 = Static<typeof ScopedExecuteResultV1>;

/** Contract of scoped execution results. */
export const scopedExecuteResultContract = defineContract({
  name: 'scoped-execute-result',
  subject: SUBJECTS.scopedExecuteResult,
  versions: { 1: ScopedExecuteResultV1 },
});
