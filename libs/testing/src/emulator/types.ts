// Shapes shared by the Kubernetes API emulator: stored objects, resource types and the admission hook.
// Objects stay plain JSON (as the API server stores them) so patches and deep comparisons stay simple.
import type { UserInfo } from '@rolepolicy/kube';

/** A JSON object as decoded from a request body. */
export type JsonObject = { [key: string]: unknown };

/** One entry of `metadata.ownerReferences`. */
export type OwnerReference = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
};

/** `metadata` of a stored object; the emulator owns uid, resourceVersion, generation and timestamps. */
export type ObjectMeta = {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
};

/** Any Kubernetes object the emulator stores. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
};

/** One `additionalPrinterColumns` entry of a CRD version (or a built-in kind's column). */
export type PrinterColumn = {
  readonly name: string;
  readonly type: string;
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: string;
  readonly priority?: number;
};

/** A served resource: one group/version/plural, built in or installed from a CRD. */
export type ResourceType = {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Whether `/status` is a subresource (status then changes only there). */
  readonly statusSubresource: boolean;
  /** Whether `metadata.generation` is maintained (custom resources and a few built-ins). */
  readonly tracksGeneration: boolean;
  /** Custom resources refuse unconditional updates and return the object on delete. */
  readonly custom: boolean;
  readonly printerColumns: readonly PrinterColumn[];
  /** The CRD that defines this resource, for admission; absent for built-in kinds. */
  readonly crd?: KubeObject;
  /** Verbs in discovery when not the usual eight (the create-only review kinds). */
  readonly verbs?: readonly string[];
};

/** What the admission hook is asked to judge. */
export type AdmissionRequest = {
  readonly operation: 'CREATE' | 'UPDATE';
  /** `''` for the main resource, `'status'` for the status subresource. */
  readonly subresource: '' | 'status';
  readonly resource: ResourceType;
  /** The object as it would be stored (status or spec already reset by the subresource rules). */
  readonly object: KubeObject;
  readonly oldObject: KubeObject | undefined;
};

/** One field-level reason for a rejection, as in a Status body's `details.causes`. */
export type AdmissionCause = {
  readonly field: string;
  readonly message: string;
  readonly reason?: string;
};

/**
 * The hook's verdict: allowed (optionally with a mutated object: pruned and defaulted), or denied
 * with either a complete API-server Status body or field causes the emulator turns into a 422.
 */
export type AdmissionOutcome =
  | { readonly allowed: true; readonly object?: KubeObject }
  | {
      readonly allowed: false;
      readonly status?: StatusBody;
      readonly causes?: readonly AdmissionCause[];
    };

/** Admission plug-in: validation, defaulting and pruning of objects before they are stored. */
export type AdmissionHook = (request: AdmissionRequest) => AdmissionOutcome | Promise<AdmissionOutcome>;

/** A `meta.k8s.io/v1` Status body as the API server returns it on errors. */
export type StatusBody = {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: JsonObject;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: JsonObject;
  readonly code: number;
};

/** Options that every write accepts. */
export type WriteOptions = {
  readonly dryRun?: boolean;
  /** `fieldValidation=Strict`: fields the schema prunes are an error instead of being dropped. */
  readonly strict?: boolean;
  /** The caller (admission policies see it as `request.userInfo`); the admin when absent. */
  readonly user?: UserInfo;
  /** Collects the `Warning` header texts admission produces (policies with the Warn action). */
  readonly warnings?: string[];
};
