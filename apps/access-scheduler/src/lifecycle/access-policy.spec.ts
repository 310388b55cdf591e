// EphemeralAccessPolicy controller decisions: each validation reason of the operator notes (4.1), the
// Suspended and RoleRetirementBlocked conditions, resolvedRoles and observedGeneration.
import type { EphemeralAccessPolicy } from '@rolepolicy/kube';
import { accessPolicyStatus, type HoldingRequest } from './access-policy.js';
import { LIMITS, accessPolicy, target } from './test-support/fixtures.js';
import type { TargetView } from './target.js';

const NOW = '2026-11-25T12:00:00Z';

function statusOf(
  policy: EphemeralAccessPolicy,
  tgt: TargetView | null = target(),
  holding: HoldingRequest[] = [],
) {
  return accessPolicyStatus({ policy, target: tgt, limits: LIMITS, holding, now: NOW });
}

const cond = (status: ReturnType<typeof statusOf>, type: string) =>
  status.conditions?.find((c) => c.type === type);

describe('EphemeralAccessPolicy status', () => {
  it('accepts a valid policy: Accepted, ResolvedRefs, Suspended=False/Active, sorted resolvedRoles, observedGeneration', () => {
    const status = statusOf(
      accessPolicy(
        {
          memberships: [
            { role: 'writer', inherit: false },
            { role: 'reader', inherit: true },
          ],
        },
        4,
      ),
    );
    expect(cond(status, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(cond(status, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'Resolved' });
    expect(cond(status, 'Suspended')).toMatchObject({ status: 'False', reason: 'Active' });
    expect(cond(status, 'RoleRetirementBlocked')).toMatchObject({
      status: 'False',
      reason: 'NoBlockingRequests',
    });
    expect(status.resolvedRoles).toEqual(['reader', 'writer']);
    expect(status.observedGeneration).toBe(4);
  });

  it.each([
    [
      'an unparsable maximumDuration',
      { maximumDuration: '2 hours' },
      'InvalidDuration',
      'spec.maximumDuration',
    ],
    ['a zero maximumDuration', { maximumDuration: '0s' }, 'InvalidDuration', 'greater than zero'],
    [
      'a maximumDuration over the cluster maximum',
      { maximumDuration: '25h' },
      'DurationExceedsClusterMaximum',
      '86400s',
    ],
    [
      'a pendingRequestTTL over the cluster maximum',
      { pendingRequestTTL: '2h' },
      'DurationExceedsClusterMaximum',
      'pendingRequestTTL',
    ],
    [
      'a defaultDuration above the maximum',
      { defaultDuration: '3h' },
      'InvalidDuration',
      'spec.defaultDuration',
    ],
    ['an empty bundle', { memberships: [] }, 'EmptyBundle', 'empty'],
    [
      'a bundle role the target does not declare',
      { memberships: [{ role: 'ghost', inherit: true }] },
      'RoleNotFound',
      'ghost',
    ],
    [
      'an external bundle role',
      { memberships: [{ role: 'platform', inherit: true }] },
      'ExternalTargetRole',
      'platform',
    ],
    [
      'a duplicate bundle role',
      {
        memberships: [
          { role: 'reader', inherit: true },
          { role: 'reader', inherit: false },
        ],
      },
      'DuplicateMembership',
      'twice',
    ],
  ] as const)('rejects %s', (_name, spec, reason, text) => {
    const status = statusOf(accessPolicy(spec as Partial<EphemeralAccessPolicy['spec']>));
    expect(cond(status, 'Accepted')).toMatchObject({ status: 'False', reason });
    expect(cond(status, 'Accepted')?.message).toContain(text);
    expect(status.resolvedRoles).toEqual([]);
  });

  it('reports a missing target as TargetNotFound on Accepted and ResolvedRefs', () => {
    const status = statusOf(accessPolicy(), null);
    expect(cond(status, 'Accepted')).toMatchObject({ status: 'False', reason: 'TargetNotFound' });
    expect(cond(status, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'TargetNotFound' });
  });

  it('reports an observe-mode target as TargetNotApplyMode', () => {
    const status = statusOf(accessPolicy(), target({ mode: 'observe' }));
    expect(cond(status, 'Accepted')).toMatchObject({ status: 'False', reason: 'TargetNotApplyMode' });
  });

  it('keeps ResolvedRefs=True when only a duration is wrong', () => {
    const status = statusOf(accessPolicy({ maximumDuration: '48h' }));
    expect(cond(status, 'Accepted')?.reason).toBe('DurationExceedsClusterMaximum');
    expect(cond(status, 'ResolvedRefs')?.status).toBe('True');
  });

  it('shows suspension of either side', () => {
    expect(cond(statusOf(accessPolicy({ suspend: true })), 'Suspended')).toMatchObject({
      status: 'True',
      reason: 'AccessPolicySuspended',
    });
    expect(cond(statusOf(accessPolicy(), target({ suspend: true })), 'Suspended')).toMatchObject({
      status: 'True',
      reason: 'TargetPolicySuspended',
    });
  });

  it('sets RoleRetirementBlocked when an active request holds a role the target no longer declares', () => {
    const holding = [{ name: 'alice-read', uid: 'uid-r1', subject: 'alice', roles: ['reader'] }];
    const retired = target({ roles: [{ name: 'alice', login: true }] } as never);
    const status = statusOf(accessPolicy(), retired, holding);
    expect(cond(status, 'RoleRetirementBlocked')).toMatchObject({ status: 'True', reason: 'ActiveRequest' });
    expect(cond(status, 'RoleRetirementBlocked')?.message).toContain('alice-read (uid uid-r1) holds reader');
    expect(cond(statusOf(accessPolicy(), target(), holding), 'RoleRetirementBlocked')?.status).toBe('False');
  });

  it('keeps lastTransitionTime of a condition that did not change', () => {
    const first = statusOf(accessPolicy());
    const again = accessPolicyStatus({
      policy: { ...accessPolicy(), status: first },
      target: target(),
      limits: LIMITS,
      holding: [],
      now: '2026-11-25T13:00:00Z',
    });
    expect(cond(again, 'Accepted')?.lastTransitionTime).toBe(NOW);
  });
});
