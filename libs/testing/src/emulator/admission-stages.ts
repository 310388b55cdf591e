// The admission stages a write passes besides the CRD engine, in the API server's order: mutating
// (MutatingAdmissionPolicies) before schema admission, validating (ValidatingAdmissionPolicies) after it.
import type { WriteOptions } from './types.js';
import type { KubeObject, ResourceType } from './types.js';

/** One write as the admission stages see it. */
export type PolicyRequest = {
  readonly type: ResourceType;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly subresource: '' | 'status';
  readonly name: string;
  readonly namespace: string | undefined;
  /** The object after the write (null on DELETE). */
  readonly object: KubeObject | null;
  /** The object before the write (null on CREATE). */
  readonly oldObject: KubeObject | null;
  readonly options: WriteOptions;
};

/** Mutating admission before schema admission: returns the object to continue with. */
export type MutatingStage = (request: PolicyRequest & { readonly object: KubeObject }) => KubeObject;

/**
 * Validating admission after mutation and schema admission: throws the API server's Status to refuse,
 * pushes warnings into `options.warnings`.
 */
export type ValidatingStage = (request: PolicyRequest) => void;
