// The type of each kind the ResourceCache holds. Every event is decoded against the resource-event
// contract (metadata fields, spec and status objects) before it is filed; the spec and status of the
// rolepolicy.io kinds were validated by the API server against the CRD schemas these types come from
// (libs/kube types.ts, generated from the same TypeBox nodes), and the gateway publishes what it read.
import type * as Kube from '@rolepolicy/kube';
import type { ResourceKindToken } from '../subjects.js';

/** Metadata of a cached object: name and namespace are always there (the subject carries them). */
export type CachedMeta = Kube.ObjectMeta & { readonly name: string; readonly namespace: string };

/** A kind's type as cached: its metadata always named. */
type Named<T extends { readonly metadata: Kube.ObjectMeta }> = Omit<T, 'metadata'> & {
  readonly metadata: CachedMeta;
};

/** A Secret as published: metadata, key names and a keyed fingerprint; never a value. */
export interface CachedSecret {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: CachedMeta;
  readonly type?: string;
  readonly keys?: readonly string[];
  readonly fingerprint?: string;
}

/** A ConfigMap as published: metadata, key names and a keyed fingerprint; never a value. */
export interface CachedConfigMap {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: CachedMeta;
  readonly keys?: readonly string[];
  readonly fingerprint?: string;
}

/** Kind token -> the type `ResourceCache.get/list` return for it. */
export interface CachedKinds {
  readonly postgrespolicy: Named<Kube.PostgresPolicy>;
  readonly postgrespolicycandidate: Named<Kube.PostgresPolicyCandidate>;
  readonly postgrespolicyplan: Named<Kube.PostgresPolicyPlan>;
  readonly ephemeralaccesspolicy: Named<Kube.EphemeralAccessPolicy>;
  readonly ephemeralaccessrequest: Named<Kube.EphemeralAccessRequest>;
  readonly secret: CachedSecret;
  readonly configmap: CachedConfigMap;
}

/** The cached type of kind `K`. */
export type Cached<K extends ResourceKindToken> = CachedKinds[K];

/** Any cached object (all kinds). */
export type AnyCached = CachedKinds[ResourceKindToken];
