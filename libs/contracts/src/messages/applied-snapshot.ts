// `rp.applied.snapshot`: what the executor read of the managed scope right after it committed a plan, on
// the session that still holds the database lock (ADR 0017). The planner's next pass of the policy may
// verify convergence from it instead of asking an inspector for a new session and a cold inspection.
// Core NATS only, never captured by a stream: the fingerprint digests role verifiers among the rest, so,
// like the inspector's replies, it must not rest in NATS (ADR 0006, ADR 0015).
import { canonicalJson, sha256Digest, type ManagedScope } from '@rolepolicy/policy';
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { ObjectRef, Timestamp } from './common.js';
import { SnapshotPayload } from './inspect-reply.js';
import { CatalogFingerprint } from './inspect-request.js';

/** Version 1 of a post-apply snapshot. */
export const AppliedSnapshotV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** The plan whose commit the snapshot follows. */
    plan: ObjectRef,
    policy: ObjectRef,
    /** The request's target (the policy's connection reference), as the planner names it. */
    target: Type.String({ minLength: 1, maxLength: 1024 }),
    /** sha256 of the canonical JSON of the managed scope read: the planner uses it only for the same scope. */
    scopeDigest: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
    /** When the read began (after the commit). */
    readAt: Timestamp,
    /** The fingerprint of the state the snapshot was read from (same transaction), or null. */
    fingerprint: Type.Union([CatalogFingerprint, Type.Null()]),
    snapshot: SnapshotPayload,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link AppliedSnapshotV1}. */
export type AppliedSnapshotV1 = Static<typeof AppliedSnapshotV1>;

/** Contract of post-apply snapshots (core NATS publish, no reply). */
export const appliedSnapshotContract = defineContract({
  name: 'applied-snapshot',
  subject: SUBJECTS.appliedSnapshot,
  versions: { 1: AppliedSnapshotV1 },
});

/** Largest encoded message the executor sends; a larger snapshot is left to the planner's inspection. */
export const APPLIED_SNAPSHOT_MAX_BYTES = 262_144;

/**
 * The digest both sides compute of the managed scope: the planner trusts a post-apply snapshot only for
 * the scope it would have asked the inspector for.
 * @example scopeDigest(expanded.scope) // 'sha256:…'
 */
export function scopeDigest(scope: ManagedScope): string {
  return sha256Digest(canonicalJson(scope));
}
