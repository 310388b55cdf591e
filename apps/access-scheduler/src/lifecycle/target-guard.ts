// The finalizer that keeps a target PostgresPolicy while a request holds access on it (ADR 0020): the
// revoke needs the policy (its connection, its uid, what it declares), so its deletion waits for it. Pure.
import type { EphemeralAccessRequest, PostgresPolicyPlan } from '@rolepolicy/kube';
import { HOLDING_PHASES } from '@rolepolicy/policy';
import { planState } from './request-checks.js';
import { TARGET_FINALIZER } from './target.js';

export { TARGET_FINALIZER };

/**
 * Whether `request` holds, or is about to hold, access on the policy with uid `policyUid`: resolved to it
 * and in a holding phase (Applying counts before its plan exists: the finalizer comes first), or in a
 * terminal phase over an activation that ran without an applied revoke (a phase the scheduler did not write).
 */
export function holdsTarget(
  request: EphemeralAccessRequest,
  activationPlan: PostgresPolicyPlan | undefined,
  revokePlan: PostgresPolicyPlan | undefined,
  policyUid: string,
): boolean {
  const resolved = request.status?.resolvedAccess;
  if (resolved == null || resolved.targetPolicyUid !== policyUid) return false;
  if (HOLDING_PHASES.includes(request.status?.phase ?? 'Pending')) return true;
  const activation = planState(activationPlan, request, 'Activate', resolved.bundleHash);
  const revoke = planState(revokePlan, request, 'Revoke', resolved.bundleHash);
  return (activation === 'Applying' || activation === 'Applied') && revoke !== 'Applied';
}

/** The finalizer change a target policy needs: add while held (never to one being deleted), else remove. */
export function targetFinalizerChange(
  policy: { readonly finalizers: readonly string[]; readonly deleting: boolean },
  held: boolean,
): 'add' | 'remove' | null {
  const has = policy.finalizers.includes(TARGET_FINALIZER);
  if (held && !has && !policy.deleting) return 'add';
  if (!held && has) return 'remove';
  return null;
}
