// Whether the API server authenticates decisions (ADR 0026), from the ValidatingAdmissionPolicies and their
// bindings the gateway lists: the reference policy rolepolicy-decisions exists and a binding enforces it.
// Pure: the informers (decision-admission.ts) feed it.
import { DECISION_ADMISSION_POLICY, type DecisionAdmissionV1 } from '@rolepolicy/contracts';

/** What the gateway knows of one ValidatingAdmissionPolicyBinding. */
export type BindingView = {
  readonly name: string;
  readonly policyName: string | undefined;
  readonly validationActions: readonly string[];
};

/** What the listing says, or why there is none. */
export type AdmissionListing =
  | {
      readonly kind: 'listed';
      readonly policies: readonly string[];
      readonly bindings: readonly BindingView[];
    }
  | { readonly kind: 'not-served' }
  | { readonly kind: 'unreadable'; readonly reason: string };

/** The state to publish (without its timestamp). */
export function decisionAdmissionState(listing: AdmissionListing): Omit<DecisionAdmissionV1, 'observedAt'> {
  const no = (detail: string) => ({ v: 1 as const, authenticated: false, detail, bindings: [] });
  if (listing.kind === 'not-served')
    return no('the API server does not serve admissionregistration.k8s.io/v1 (Kubernetes 1.30+ needed)');
  if (listing.kind === 'unreadable')
    return no(`the k8s-gateway cannot list ValidatingAdmissionPolicies: ${listing.reason}`);
  if (!listing.policies.includes(DECISION_ADMISSION_POLICY))
    return no(`no ValidatingAdmissionPolicy ${DECISION_ADMISSION_POLICY} is installed`);
  const bound = listing.bindings.filter((b) => b.policyName === DECISION_ADMISSION_POLICY);
  if (bound.length === 0) return no(`no ValidatingAdmissionPolicyBinding binds ${DECISION_ADMISSION_POLICY}`);
  const enforcing = bound.filter((b) => b.validationActions.includes('Deny')).map((b) => b.name);
  if (enforcing.length === 0)
    return no(
      `the bindings of ${DECISION_ADMISSION_POLICY} (${bound.map((b) => b.name).join(', ')}) do not deny (validationActions without Deny)`,
    );
  const names = [...enforcing].sort().slice(0, 64);
  return {
    v: 1,
    authenticated: true,
    detail: `the admission policy ${DECISION_ADMISSION_POLICY} is enforced by ${names.join(', ')}`,
    bindings: names,
  };
}
