// `rp.k8s.cmd.<sender>.<command>`: a write other services ask the k8s-gateway to make on the Kubernetes API.
// The gateway authorises it for the sender its subject names (ADR 0022) and applies it with optimistic
// concurrency; the idempotency key makes redelivery harmless.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { IdempotencyKey, ObjectRef } from './common.js';

/**
 * A core/v1 Event to record about `target`. The gateway deduplicates as the API conventions ask: the
 * same object, type, reason, message and component is one Event whose `count` grows.
 */
export const KubeEventBody = Type.Object(
  {
    type: Type.Union([Type.Literal('Normal'), Type.Literal('Warning')]),
    /** UpperCamelCase, machine-readable: `PlanApplied`. */
    reason: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Z][A-Za-z0-9]*$' }),
    /** Human-readable and redacted (no passwords, verifiers, URL credentials). */
    message: Type.String({ maxLength: 1024 }),
    /** What was done or failed: `Plan`, `Approve`, `Apply`. */
    action: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Z][A-Za-z0-9]*$' }),
    /** The service that saw it happen, the Event's `source.component`: `rolepolicy-planner`. */
    component: Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' }),
  },
  { additionalProperties: false },
);

/** Typed {@link KubeEventBody}. */
export type KubeEventBody = Static<typeof KubeEventBody>;

/**
 * The sender's leader term (ADR 0011): the gateway applies the command only while `epoch` is the current
 * epoch of the lease `lease` in the `rp-leaders` KV bucket, so a deposed (or paused) leader's writes are
 * refused once a successor holds the lease. Commands of services without an election carry none.
 */
export const CommandFence = Type.Object(
  {
    lease: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][-a-z0-9]*$' }),
    epoch: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

/** Typed {@link CommandFence}. */
export type CommandFence = Static<typeof CommandFence>;

/**
 * Commands with the same ordering key are applied in stream order, one at a time; commands with different
 * keys may be applied side by side (`GATEWAY_COMMAND_CONCURRENCY`). Senders key by what their writes must stay
 * ordered within, the PostgresPolicy they concern (`<namespace>/<name>`, {@link policyOrderingKey}).
 * Commands without a key are applied in stream order with respect to each other.
 */
export const OrderingKey = Type.String({ minLength: 1, maxLength: 512 });

/** The ordering key of commands about one PostgresPolicy (its plans, candidates, requests and Events). */
export function policyOrderingKey(namespace: string, policyName: string): string {
  return `policy/${namespace}/${policyName}`;
}

/** Version 1 of a k8s-gateway command (a discriminated union on `command`). */
export const K8sCommandV1 = Type.Union([
  Type.Object(
    {
      v: Type.Literal(1),
      command: Type.Literal('patch-status'),
      target: ObjectRef,
      /** Merge-patch body for the `/status` subresource. */
      status: Type.Record(Type.String(), Type.Unknown()),
      /** resourceVersion the sender based its decision on; a conflict means re-decide. */
      resourceVersion: Type.Optional(Type.String({ minLength: 1 })),
      idempotencyKey: IdempotencyKey,
      fence: Type.Optional(CommandFence),
      orderingKey: Type.Optional(OrderingKey),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      v: Type.Literal(1),
      command: Type.Literal('apply-resource'),
      /**
       * Never a Secret: a command rests in a stream, so a Secret's data must not travel in one (generated
       * passwords go through `rp.k8s.secret.generate`, which draws the value where it is written).
       */
      target: Type.Object(
        {
          ...ObjectRef.properties,
          kind: Type.String({ minLength: 1, maxLength: 63, not: { const: 'Secret' } }),
        },
        { additionalProperties: false },
      ),
      /** The full desired object (create or replace). */
      object: Type.Record(Type.String(), Type.Unknown()),
      /**
       * Create only: when the object exists already it is left untouched and the command counts as
       * applied (a generated password Secret is created exactly once).
       */
      createOnly: Type.Optional(Type.Boolean()),
      /**
       * Written through the `/status` subresource right after the create or replace (a CREATE drops
       * status), so an object and its status arrive in one ordered command. Custom kinds only.
       */
      status: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      idempotencyKey: IdempotencyKey,
      fence: Type.Optional(CommandFence),
      orderingKey: Type.Optional(OrderingKey),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      v: Type.Literal(1),
      command: Type.Literal('record-event'),
      /** The object the Event is about (`involvedObject`); without uid the gateway reads it. */
      target: ObjectRef,
      event: KubeEventBody,
      idempotencyKey: IdempotencyKey,
      fence: Type.Optional(CommandFence),
      orderingKey: Type.Optional(OrderingKey),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      v: Type.Literal(1),
      /**
       * Adds or removes one finalizer of a rolepolicy.io object (read, change, replace with its
       * resourceVersion), e.g. the access-scheduler's `rolepolicy.io/ephemeral-access` on a request.
       */
      command: Type.Literal('set-finalizer'),
      target: ObjectRef,
      finalizer: Type.String({ minLength: 1, maxLength: 253 }),
      present: Type.Boolean(),
      idempotencyKey: IdempotencyKey,
      fence: Type.Optional(CommandFence),
      orderingKey: Type.Optional(OrderingKey),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      v: Type.Literal(1),
      command: Type.Literal('delete-resource'),
      target: ObjectRef,
      idempotencyKey: IdempotencyKey,
      fence: Type.Optional(CommandFence),
      orderingKey: Type.Optional(OrderingKey),
    },
    { additionalProperties: false },
  ),
]);

/** Typed payload of {@link K8sCommandV1}. */
export type K8sCommandV1 = Static<typeof K8sCommandV1>;

/** Contract of k8s-gateway commands. */
export const k8sCommandContract = defineContract({
  name: 'k8s-command',
  subject: SUBJECTS.k8sCommandAll,
  versions: { 1: K8sCommandV1 },
});
