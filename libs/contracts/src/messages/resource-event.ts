// `rp.resource.<kind>.<namespace>.<name>`: the full object as the k8s-gateway's informers see it.
// Level-triggered: consumers act on the whole object, never on a diff against an earlier event.
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { Timestamp } from './common.js';

/** Version 1 of a resource event. */
export const ResourceEventV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** `upsert` for add/update/resync, `delete` when the object is gone. */
    type: Type.Union([Type.Literal('upsert'), Type.Literal('delete')]),
    /** The whole Kubernetes object (Secrets included: never log it). */
    object: Type.Object(
      {
        apiVersion: Type.String({ minLength: 1 }),
        kind: Type.String({ minLength: 1 }),
        metadata: Type.Object({
          name: Type.String({ minLength: 1 }),
          namespace: Type.String({ minLength: 1 }),
        }),
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
