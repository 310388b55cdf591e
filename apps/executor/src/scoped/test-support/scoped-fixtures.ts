// A scoped execution request and the objects it is verified against, as the unit specs build them: an
// Activate or Revoke of request alice-read's bundle (alice in reader) on policy orders, everything matching.
import { BUNDLE_ENCODING, bundleHash, scopedPlanName } from '@rolepolicy/policy';
import type { PlanRequest, ScopedPlanObject, ScopedRequestObject, ScopedState } from '../scoped-verify.js';

const NS = 'team-a';
export const FP = 'sha256:fp';
export const memberships = [{ role: 'reader', member: 'alice', inherit: true }];
const HASH = bundleHash({ targetDatabaseFingerprint: FP, memberships });
export const REQ = { name: 'alice-read', uid: 'a1b2c3d4-0000' };
const POLICY_UID = 'policy-uid';

export const ref = (kind: string, name: string, uid?: string) => ({
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind,
  namespace: NS,
  name,
  ...(uid ? { uid } : {}),
});

export function message(operation: 'Activate' | 'Revoke' = 'Activate'): PlanRequest {
  return {
    v: 1,
    plan: ref('PostgresPolicyPlan', scopedPlanName(REQ, operation, HASH)),
    request: ref('EphemeralAccessRequest', REQ.name, REQ.uid),
    policy: ref('PostgresPolicy', 'orders', POLICY_UID),
    operation,
    bundleHash: HASH,
    idempotencyKey: `${REQ.uid}/${operation}/${HASH}`,
  };
}

export function plan(operation: 'Activate' | 'Revoke', phase = 'Applying'): ScopedPlanObject {
  return {
    metadata: {
      name: scopedPlanName(REQ, operation, HASH),
      ownerReferences: [{ kind: 'EphemeralAccessRequest', uid: REQ.uid, controller: true }],
    },
    spec: {
      policyRef: { name: 'orders' },
      origin: { kind: 'EphemeralAccessRequest', uid: REQ.uid },
      scope: { kind: 'MembershipBundle', operation, bundleHash: HASH },
    },
    status: { phase },
  };
}

export function request(
  phase = 'Applying',
  over: Partial<NonNullable<ScopedRequestObject['status']>['resolvedAccess']> = {},
): ScopedRequestObject {
  return {
    metadata: { name: REQ.name, uid: REQ.uid },
    spec: { subject: { role: 'alice' } },
    status: {
      phase,
      resolvedAccess: {
        bundleEncoding: BUNDLE_ENCODING,
        bundleHash: HASH,
        targetDatabaseFingerprint: FP,
        memberships,
        targetPolicyUid: POLICY_UID,
        ...over,
      },
    },
  };
}

export function state(
  over: Partial<ScopedState> = {},
  operation: 'Activate' | 'Revoke' = 'Activate',
): ScopedState {
  return {
    plan: plan(operation),
    request: request(operation === 'Activate' ? 'Applying' : 'Revoking'),
    policy: { metadata: { uid: POLICY_UID } },
    activationPlan: plan('Activate', operation === 'Activate' ? 'Applying' : 'Applied'),
    ...over,
  };
}
