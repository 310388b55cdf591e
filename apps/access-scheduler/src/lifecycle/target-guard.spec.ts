// The target policy's finalizer (ADR 0020): present while a request holds or is about to hold access on it,
// never added to a policy being deleted, released once nothing holds.
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { holdsTarget, TARGET_FINALIZER, targetFinalizerChange } from './target-guard.js';
import { plan, request } from './test-support/fixtures.js';

const resolvedRequest = (phase: string): EphemeralAccessRequest =>
  request({
    phase: phase as never,
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

describe('target finalizer', () => {
  it('is held by a request resolved to the policy in a holding phase, and by an unrevoked terminal one', () => {
    for (const phase of ['Applying', 'Active', 'Revoking'])
      expect(holdsTarget(resolvedRequest(phase), undefined, undefined, 'uid-orders')).toBe(true);
    expect(holdsTarget(resolvedRequest('Active'), undefined, undefined, 'uid-other')).toBe(false);
    const ended = resolvedRequest('Ended');
    expect(holdsTarget(ended, undefined, undefined, 'uid-orders')).toBe(false);
    const activation = plan(ended, 'Activate', 'Applied');
    expect(holdsTarget(ended, activation, undefined, 'uid-orders')).toBe(true);
    expect(holdsTarget(ended, activation, plan(ended, 'Revoke', 'Applied'), 'uid-orders')).toBe(false);
    expect(holdsTarget(request(), undefined, undefined, 'uid-orders')).toBe(false);
  });

  it('is added while held (never to a policy being deleted) and removed once nothing holds', () => {
    expect(targetFinalizerChange({ finalizers: [], deleting: false }, true)).toBe('add');
    expect(targetFinalizerChange({ finalizers: [], deleting: true }, true)).toBeNull();
    expect(targetFinalizerChange({ finalizers: [TARGET_FINALIZER], deleting: true }, true)).toBeNull();
    expect(targetFinalizerChange({ finalizers: [TARGET_FINALIZER], deleting: true }, false)).toBe('remove');
    expect(targetFinalizerChange({ finalizers: [TARGET_FINALIZER], deleting: false }, false)).toBe('remove');
    expect(targetFinalizerChange({ finalizers: [], deleting: false }, false)).toBeNull();
  });
});
