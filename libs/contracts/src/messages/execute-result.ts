// `rp.execute.result`: what the executor did with one execution request, for the planner to record.
// Messages and statements here are redacted: no password, verifier or connection URL ever travels.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { ErrorClassSchema, IdempotencyKey, ObjectRef, Timestamp } from './common.js';

/**
 * Phases the executor reports: the plan phases it owns, plus `Skipped` (nothing ran and the plan's fresh
 * state forbids execution: not approved, denied, suspended, observe mode, terminal, or the plan or policy
 * is gone). The planner answers `Skipped` by reconciling from the fresh state, never by changing the plan.
 */
export const EXECUTE_RESULT_PHASES = ['Applying', 'Applied', 'Failed', 'Superseded', 'Skipped'] as const;

/** One of {@link EXECUTE_RESULT_PHASES}. */
export type ExecuteResultPhase = (typeof EXECUTE_RESULT_PHASES)[number];

/** Version 1 of an execution result. */
export const ExecuteResultV1 = Type.Object(
  {
    v: Type.Literal(1),
    plan: ObjectRef,
    /** Absent when the request (v1) did not name the policy. */
    policy: Type.Optional(ObjectRef),
    idempotencyKey: IdempotencyKey,
    phase: Type.Unsafe<ExecuteResultPhase>({ type: 'string', enum: [...EXECUTE_RESULT_PHASES] }),
    /** CamelCase reason, e.g. `Executed`, `AlreadyConverged`, `DigestMismatch`, `TargetIdentityUnavailable`. */
    reason: Type.String({ minLength: 1, maxLength: 128 }),
    /** Human-readable, redacted. */
    message: Type.String({ maxLength: 4096 }),
    /** The approved digest from the request. */
    approvedDigest: Type.String({ minLength: 1, maxLength: 128 }),
    /** The digest recomputed under the lock (null when the executor could not compute it). */
    recomputedDigest: Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()]),
    /** The digest whose SQL ran (Applying/Applied with statements), else null. */
    executedDigest: Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()]),
    /** Statements run (Applied), to be run (Applying), or 0. */
    statementCount: Type.Integer({ minimum: 0 }),
    appliedAt: Type.Optional(Timestamp),
    /**
     * Set on Applied: role -> password source version now in effect (the planner records it as
     * `applied_password_source_versions`). Versions only, never passwords.
     */
    appliedPasswordSourceVersions: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 63 }),
        Type.String({ minLength: 1, maxLength: 512 }),
      ),
    ),
    /** Set on Failed: whether retrying later may help (`transient`) or the input must change (`permanent`). */
    errorClass: Type.Optional(ErrorClassSchema),
    failedAt: Type.Optional(Timestamp),
    /** Set on Failed: the plan's `lastError`, with the redacted failing statement and its SQLSTATE. */
    lastError: Type.Optional(
      Type.Object(
        {
          message: Type.String({ maxLength: 4096 }),
          statementIndex: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
          statement: Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]),
          sqlState: Type.Union([Type.String({ minLength: 5, maxLength: 5 }), Type.Null()]),
        },
        { additionalProperties: false },
      ),
    ),
    reportedAt: Timestamp,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ExecuteResultV1}. */
export type ExecuteResultV1 = Static<typeof ExecuteResultV1>;

/** Contract of execution results. */
export const executeResultContract = defineContract({
  name: 'execute-result',
  subject: SUBJECTS.executeResult,
  versions: { 1: ExecuteResultV1 },
});
