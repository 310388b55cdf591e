// `rp.deadletter.<original subject>`: a message the spine gave up on, with the reason why.
// The original bytes are kept (base64) for replay; they are stored in the stream, never logged.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { Timestamp } from './common.js';

/** Why a message was dead-lettered. */
export const DeadLetterReason = Type.Union([
  Type.Literal('invalid_payload'),
  Type.Literal('no_contract'),
  Type.Literal('redelivery_exhausted'),
]);

/** Version 1 of a dead letter. */
export const DeadLetterV1 = Type.Object(
  {
    v: Type.Literal(1),
    reason: DeadLetterReason,
    /** Human-readable cause (validation path or error message), never payload values. */
    detail: Type.String({ maxLength: 4096 }),
    subject: Type.String({ minLength: 1 }),
    stream: Type.String({ minLength: 1 }),
    consumer: Type.String({ minLength: 1 }),
    streamSequence: Type.Integer({ minimum: 0 }),
    deliveryCount: Type.Integer({ minimum: 1 }),
    deadLetteredAt: Timestamp,
    /** The original message bytes, base64. */
    data: Type.String(),
  },
  { additionalProperties: false },
);

/** Typed payload of {@link DeadLetterV1}. */
export type DeadLetterV1 = Static<typeof DeadLetterV1>;

/** Contract of dead letters. */
export const deadLetterContract = defineContract({
  name: 'dead-letter',
  subject: SUBJECTS.deadLetterAll,
  versions: { 1: DeadLetterV1 },
});
