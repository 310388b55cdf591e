// The target facts a scoped plan is built from: the target policy while it has a lock identity, else the
// facts the activation plan recorded (a revoke never waits for its target).
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { scopedPlanTarget, type TargetView } from './target.js';
import { plan, request, target } from './test-support/fixtures.js';

const resolved: EphemeralAccessRequest = request({
  phase: 'Active',
  resolvedAccess: {
    accessPolicyGeneration: 1,
    accessPolicyUid: 'uid-eap',
    bundleEncoding: 'rolepolicy.io/ephemeral-membership-bundle/v1',
    bundleHash: `sha256:${'a'.repeat(64)}`,
    grantedDuration: '1800s',
    memberships: [{ role: 'reader', member: 'alice', inherit: true }],
    targetDatabaseFingerprint: `sha256:${'b'.repeat(64)}`,
    targetPolicyGeneration: 3,
    targetPolicyUid: 'uid-orders',
  },
});

describe('scopedPlanTarget', () => {
  it('is the target policy while it has a lock identity', () => {
    const view = target();
    expect(scopedPlanTarget(view, plan(resolved, 'Activate', 'Applied'))).toBe(view);
  });

  it("falls back to the activation plan's target facts when the target has none, or is gone", () => {
    const activation = plan(resolved, 'Activate', 'Applied');
    const unplanned: TargetView = { ...target(), managedDatabaseIdentity: null };
    for (const view of [unplanned, null]) {
      expect(scopedPlanTarget(view, activation)).toMatchObject({
        name: activation.spec.policyRef.name,
        generation: activation.spec.policyGeneration,
        managedDatabaseIdentity: activation.spec.managedDatabaseIdentity,
        reconciliationMode: activation.spec.reconciliationMode,
        applies: true,
        suspended: false,
      });
    }
  });

  it('is null with neither a planned target nor an activation plan', () => {
    expect(scopedPlanTarget(null, undefined)).toBeNull();
    expect(scopedPlanTarget({ ...target(), managedDatabaseIdentity: null }, undefined)).toBeNull();
  });
});
