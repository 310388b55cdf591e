// The commands a reconcile decision emits, in the order they must run (each awaited before the next):
// plans become visible before anything they replace is superseded, and status precedes execution.

import type { PlanStatusPatch, SupersedeCause } from './plan-patches.js';
import type { ConfigMap, PostgresPolicyPlan, PostgresPolicyStatus } from './resources.js';

/** Work for the executor: which plan, bound to which approved digest. */
export interface ExecutionRequest {
  readonly namespace: string;
  readonly policyName: string;
  readonly policyUid: string;
  readonly planName: string;
  /** The digest the approval binds to; the executor recomputes under its lock and compares. */
  readonly changeDigest: string;
  readonly changeDigestEncoding: string;
  /**
   * The target identity recorded on the plan this decision saw. Carried here rather than read back from the
   * cache at send time, where a just-created plan may show up before its status does.
   */
  readonly approvedIdentity: { readonly physical: string | null; readonly logical: string | null };
  /** `<policy uid>/<plan name>/<digest>/<computedAt>`: redelivery and repeated requests are the same job. */
  readonly idempotencyKey: string;
}

/** Why an existing plan's status is patched. */
export type PlanPatchPurpose =
  | { readonly kind: 'revalidate' }
  /** The pending `Approved` condition says whether decisions are authenticated (ADR 0026). */
  | { readonly kind: 'approvalAuthentication' }
  | { readonly kind: 'autoApprove' }
  | { readonly kind: 'recordApprovedPhase' }
  | { readonly kind: 'reject' }
  | { readonly kind: 'supersede'; readonly cause: SupersedeCause }
  | { readonly kind: 'interrupted' }
  | {
      readonly kind: 'failClosed';
      readonly reason: 'PhysicalIdentityRequired' | 'TargetIdentityUnavailable';
    };

/** One command of a decision. */
export type ReconcileStep =
  /** Create the ConfigMap (if any) first, then the plan, then its status subresource. */
  | { readonly kind: 'createPlan'; readonly plan: PostgresPolicyPlan; readonly configMap: ConfigMap | null }
  | { readonly kind: 'patchPlanStatus'; readonly patch: PlanStatusPatch; readonly purpose: PlanPatchPurpose }
  | { readonly kind: 'writePolicyStatus'; readonly status: PostgresPolicyStatus }
  | { readonly kind: 'requestExecution'; readonly request: ExecutionRequest }
  /** Retention: delete the plan and its SQL ConfigMap (best effort). */
  | { readonly kind: 'deletePlan'; readonly planName: string; readonly configMapName: string | null };
