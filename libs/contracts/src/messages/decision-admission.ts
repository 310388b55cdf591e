// `rp.resource._admission.decisions`: whether the API server authenticates decisions, as the k8s-gateway
// reads it from the cluster (ADR 0026): the reference ValidatingAdmissionPolicy `rolepolicy-decisions` exists
// and a binding enforces it. Published on the resource stream like the configuration the gateway reads, the
// latest message per subject is the current answer; the planner and the access-scheduler report decisions
// as unauthenticated while it says no (or says nothing yet).
import { Type, type Static } from '@sinclair/typebox';
import { defineContract } from '../contract.js';
import { SUBJECTS } from '../subjects.js';
import { Timestamp } from './common.js';

/** The reference admission policy of decisions (deploy/admission/decisions.yaml). */
export const DECISION_ADMISSION_POLICY = 'rolepolicy-decisions';

/** Version 1 of the decision admission state. */
export const DecisionAdmissionV1 = Type.Object(
  {
    v: Type.Literal(1),
    /** True when the policy exists and a binding enforces it (`validationActions` holds `Deny`). */
    authenticated: Type.Boolean(),
    /** One sentence saying why, for logs and condition messages (names of objects only). */
    detail: Type.String({ minLength: 1, maxLength: 1024 }),
    /** The bindings that enforce the policy (empty when unauthenticated). */
    bindings: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 64 }),
    observedAt: Timestamp,
  },
  { additionalProperties: false },
);

/** Typed payload of {@link DecisionAdmissionV1}. */
export type DecisionAdmissionV1 = Static<typeof DecisionAdmissionV1>;

/** Contract of the decision admission state; listed before resource events (narrower subject). */
export const decisionAdmissionContract = defineContract({
  name: 'decision-admission',
  subject: SUBJECTS.decisionAdmission,
  versions: { 1: DecisionAdmissionV1 },
});

/** Kind-position token of the state: never a resource kind (those never start with `_`). */
export const DECISION_ADMISSION_TOKEN = '_admission';

/** The subject under a subject root (`rp` in production, a sandbox's in tests). */
export function decisionAdmissionSubject(root: string): string {
  return `${root}.resource.${DECISION_ADMISSION_TOKEN}.decisions`;
}
