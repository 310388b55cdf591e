// `rp.resource.<kind>.<namespace>.<name>`: the full object as the k8s-gateway's informers see it.
// Level-triggered: consumers act on the whole object, never on a diff against an earlier event.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { Timestamp } from './common.js';

/** What stands in for a literal secret value (e.g. `spec.connection.params.password`) on the stream. */
export const REDACTED_VALUE = '[REDACTED]';

/** Version 1 of a resource event. */
export const ResourceEventV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** `upsert` for add/update/resync, `delete` when the object is gone. */
    type: Type.Union([Type.Literal('upsert'), Type.Literal('delete')]),
    /**
     * The object as the gateway publishes it: whole for rolepolicy.io kinds (a literal connection password
     * replaced by {@link REDACTED_VALUE}); metadata, key names and a keyed fingerprint for Secrets and
     * ConfigMaps. A value field is refused here, so no sender can put one on the stream by mistake.
     */
    object: Type.Object(
      {
        apiVersion: Type.String({ minLength: 1 }),
        kind: Type.String({ minLength: 1 }),
        // The metadata fields services read, checked once here so the cache can hand out typed objects.
        metadata: Type.Object({
          name: Type.String({ minLength: 1 }),
          namespace: Type.String({ minLength: 1 }),
          uid: Type.Optional(Type.String()),
          resourceVersion: Type.Optional(Type.String()),
          generation: Type.Optional(Type.Integer()),
          creationTimestamp: Type.Optional(Type.String()),
          deletionTimestamp: Type.Optional(Type.String()),
          labels: Type.Optional(Type.Record(Type.String(), Type.String())),
          annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
          finalizers: Type.Optional(Type.Array(Type.String())),
          ownerReferences: Type.Optional(
            Type.Array(
              Type.Object({
                apiVersion: Type.String(),
                kind: Type.String(),
                name: Type.String(),
                uid: Type.String(),
                controller: Type.Optional(Type.Boolean()),
                blockOwnerDeletion: Type.Optional(Type.Boolean()),
              }),
            ),
          ),
        }),
        /** rolepolicy.io kinds: what the API server validated against the CRD schema (libs/kube). */
        spec: Type.Optional(Type.Object({})),
        status: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
        data: Type.Optional(Type.Never()),
        stringData: Type.Optional(Type.Never()),
        binaryData: Type.Optional(Type.Never()),
        /** Secrets and ConfigMaps: the names of their keys. */
        keys: Type.Optional(Type.Array(Type.String())),
        /** Secrets and ConfigMaps: `hmac-sha256:<hex>` over the values, keyed per installation. */
        fingerprint: Type.Optional(Type.String({ pattern: '^hmac-sha256:[0-9a-f]{64}$' })),
      },
      { additionalProperties: true },
    ),
    observedAt: Timestamp,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ResourceEventV1}. */
export type ResourceEventV1 = Static<typeof ResourceEventV1>;

/** Contract of resource events. */
export const resourceEventContract = defineContract({
  name: 'resource-event',
  subject: SUBJECTS.resourceAll,
  versions: { 1: ResourceEventV1 },
});
