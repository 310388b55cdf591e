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

describe('privileged bundle roles are reported early (ADR 0021)', () => {
  const privilegedTarget = () =>
    target({
      roles: [
        { name: 'reader', login: false },
        { name: 'ops', login: false, superuser: true },
        { name: 'files', login: false },
        { name: 'alice', login: true },
        { name: 'pg_read_server_files', external: true },
      ],
      memberships: [{ role: 'pg_read_server_files', members: [{ name: 'files' }] }],
    } as never);
  const accepted = (policy: EphemeralAccessPolicy, limits = LIMITS) =>
    accessPolicyStatus({ policy, target: privilegedTarget(), limits, holding: [], now: NOW });

  it.each([
    ['a role the target declares SUPERUSER', 'ops', 'in PostgresPolicy orders, role ops has SUPERUSER'],
    [
      'a role the target makes a member of a predefined role',
      'files',
      'in PostgresPolicy orders, role files is a member of pg_read_server_files, which is a predefined role',
    ],
  ])('Accepted=False/PrivilegedRole for %s, naming the role and the rule', (_name, role, text) => {
    const status = accepted(accessPolicy({ memberships: [{ role, inherit: true }] }));
    expect(cond(status, 'Accepted')).toMatchObject({ status: 'False', reason: 'PrivilegedRole' });
    expect(cond(status, 'Accepted')?.message).toContain(text);
    expect(cond(status, 'Accepted')?.message).toContain('spec.allowPrivilegedRoles is not true');
    expect(status.resolvedRoles).toEqual([]);
  });

  it('a policy that opts in is still refused where the operator does not allow it, and accepted where it does', () => {
    const policy = accessPolicy({
      memberships: [{ role: 'ops', inherit: true }],
      allowPrivilegedRoles: true,
    });
    const refused = accepted(policy);
    expect(cond(refused, 'Accepted')).toMatchObject({ status: 'False', reason: 'PrivilegedRole' });
    expect(cond(refused, 'Accepted')?.message).toContain(
      'the operator does not allow privileged roles in namespace team-a (EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES)',
    );
    const allowed = accepted(policy, { ...LIMITS, privilegedNamespaces: { all: false, names: ['team-a'] } });
    expect(cond(allowed, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
  });

  it('plain roles need no opt-in', () => {
    expect(cond(accepted(accessPolicy()), 'Accepted')).toMatchObject({ status: 'True' });
  });
});

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
