// The Sweep requests of one rebuild (ADR 0020, "The sweep"): one per target PostgresPolicy that an access
// policy names, sent on the revocation subject; the executor decides under the lock what is orphaned. Pure.
import { SWEEP_BUNDLE, type ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import { API_VERSION } from '@rolepolicy/kube';

/** The cached objects this reads (metadata and the access policy's target reference). */
interface Named {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly uid?: string };
}
interface AccessPolicyRef extends Named {
  readonly spec?: { readonly postgresPolicyRef?: { readonly name?: string } };
}

/**
 * The Sweep of each target policy that exists (with a uid) and is named by an access policy of its
 * namespace, keyed by `at` (the rebuild's time) so each rebuild's request is its own message.
 */
export function sweepRequests(
  accessPolicies: readonly AccessPolicyRef[],
  policy: (namespace: string, name: string) => Named | undefined,
  at: number,
): ScopedExecuteRequestV1[] {
  const targets = new Map<string, Named>();
  for (const access of accessPolicies) {
    const ns = access.metadata.namespace ?? '';
    const target = policy(ns, access.spec?.postgresPolicyRef?.name ?? '');
    if (target?.metadata.uid !== undefined) targets.set(`${ns}/${target.metadata.uid}`, target);
  }
  return [...targets.values()].map((target) => {
    const ref = {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicy',
      namespace: target.metadata.namespace ?? '',
      name: target.metadata.name,
      uid: target.metadata.uid!,
    };
    // A Sweep has no plan and no request: both repeat the target (the contract's convention).
    return {
      v: 1,
      plan: ref,
      request: ref,
      policy: ref,
      operation: 'Sweep',
      bundleHash: SWEEP_BUNDLE,
      idempotencyKey: `${ref.uid}/Sweep/${at}`,
    };
  });
}
