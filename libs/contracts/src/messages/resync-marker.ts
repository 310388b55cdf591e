// `rp.resource.<kind>._resync.<chunk>`: what the Kubernetes API held of one kind at a LIST (or resync), as
// uid/resourceVersion pairs. Consumers drop every object of that kind the marker does not list (ADR 0005).
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { RESOURCE_KINDS, SUBJECTS } from '../subjects.js';
import { Timestamp } from './common.js';

/** One object the API has: its uid and the resourceVersion the gateway listed. */
export const ListedObject = Type.Object(
  {
    uid: Type.String({ minLength: 1, maxLength: 128 }),
    resourceVersion: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: false },
);

/** Version 1 of a resync marker chunk. A marker is complete once chunks `0 .. chunks-1` of its `resyncId` arrived. */
export const ResyncMarkerV1 = Type.Object(
  {
    v: Type.Literal(1),
    kind: Type.Union(RESOURCE_KINDS.map((k) => Type.Literal(k))),
    /** Identity of the API the list came from (the `kube-system` namespace uid); a new one starts a fresh view. */
    clusterId: Type.String({ minLength: 1, maxLength: 128 }),
    /** Unique per marker; chunks of one marker share it. */
    resyncId: Type.String({ minLength: 1, maxLength: 128 }),
    /** The one namespace the gateway watches, when it does not watch the whole cluster: the marker covers it only. */
    namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
    /** resourceVersion of the LIST, when the marker comes from one. */
    listResourceVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    chunk: Type.Integer({ minimum: 0 }),
    chunks: Type.Integer({ minimum: 1 }),
    /** This chunk's share of the objects the API has (no names: nothing beyond identity travels here). */
    objects: Type.Array(ListedObject),
    observedAt: Timestamp,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link ResyncMarkerV1}. */
export type ResyncMarkerV1 = Static<typeof ResyncMarkerV1>;

/** Contract of resync markers; listed before resource events so the narrower subject pattern wins. */
export const resyncMarkerContract = defineContract({
  name: 'resync-marker',
  subject: SUBJECTS.resyncMarkerAll,
  versions: { 1: ResyncMarkerV1 },
});
