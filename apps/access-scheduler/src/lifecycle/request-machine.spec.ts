// The request state machine, phase by phase (operator notes 4.2, 4.3, 4.7): resolution, approval bound to
// bundleHash and grantedDuration, activation through the scoped plan, expiry, revocation, Denied as a kill
// switch, suspension, cancellation, deletion, and conditions re-derived after a person's status patch.
import type { EphemeralAccessPolicy, EphemeralAccessRequest, PostgresPolicyPlan } from '@rolepolicy/kube';
import { decideRequest, type RequestDecision } from './request-machine.js';
import { resolveRequest, type FingerprintRead } from './resolution.js';
import { planStatusOfResult } from './scoped-plan.js';
import type { TargetView } from './target.js';
import { FINGERPRINT, LIMITS, T0, accessPolicy, plan, request, target } from './test-support/fixtures.js';

type World = {
  policy?: EphemeralAccessPolicy | null;
  target?: TargetView | null;
  fingerprint?: FingerprintRead;
  activation?: 'Applying' | 'Applied' | 'Failed';
  revoke?: 'Applying' | 'Applied' | 'Failed';
  now?: number;
  decisionsUnauthenticated?: boolean;
};

function decide(req: EphemeralAccessRequest, world: World = {}): RequestDecision {
  const tgt = world.target === undefined ? target() : world.target;
  const resolution = resolveRequest({
    request: req,
    accessPolicy: world.policy === undefined ? accessPolicy() : world.policy,
    target: tgt,
    limits: LIMITS,
    fingerprint: world.fingerprint ?? { ok: true, fingerprint: FINGERPRINT },
  });
  const resolved = req.status?.resolvedAccess != null;
  const planOf = (
    op: 'Activate' | 'Revoke',
    phase?: 'Applying' | 'Applied' | 'Failed',
  ): PostgresPolicyPlan | undefined =>
    resolved && phase
      ? plan(req, op, phase, phase === 'Failed' ? 'RoleMissing: role reader does not exist' : undefined)
      : undefined;
  return decideRequest({
    request: req,
    resolution,
    target: tgt,
    activationPlan: planOf('Activate', world.activation),
    revokePlan: planOf('Revoke', world.revoke),
    now: world.now ?? T0,
    ...(world.decisionsUnauthenticated === undefined
      ? {}
      : { decisionsUnauthenticated: world.decisionsUnauthenticated }),
  });
}

/** The request after the decision's status write landed. */
function after(req: EphemeralAccessRequest, decision: RequestDecision): EphemeralAccessRequest {
  return decision.status === null ? req : { ...req, status: decision.status };
}

const cond = (req: EphemeralAccessRequest, type: string) =>
  req.status?.conditions?.find((c) => c.type === type);
const MIN = 60_000;
const deleting = (req: EphemeralAccessRequest): EphemeralAccessRequest => ({
  ...req,
  metadata: { ...req.metadata, deletionTimestamp: '2026-11-25T12:05:00Z' },
});

/** An Automatic request resolved at T0: Applying, granted 30 minutes. */
function applying(): EphemeralAccessRequest {
  return after(request(), decide(request()));
}

function active(): EphemeralAccessRequest {
  const req = applying();
  return after(req, decide(req, { activation: 'Applied' }));
}

function pendingApproval(spec: Partial<EphemeralAccessPolicy['spec']> = {}): EphemeralAccessRequest {
  const req = request();
  return after(req, decide(req, { policy: accessPolicy({ approval: { mode: 'Required' }, ...spec }) }));
}

function approve(
  req: EphemeralAccessRequest,
  overrides: { bundleHash?: string; grantedDuration?: string } = {},
) {
  const resolved = req.status!.resolvedAccess!;
  return {
    ...req,
    status: {
      ...req.status,
      conditions: [
        ...(req.status?.conditions ?? []),
        {
          type: 'Approved',
          status: 'True',
          reason: 'Approved',
          bundleHash: overrides.bundleHash ?? resolved.bundleHash,
          grantedDuration: overrides.grantedDuration ?? resolved.grantedDuration,
          lastTransitionTime: '2026-11-25T12:01:00Z',
        },
      ],
      decidedBy: { username: 'bob@example.com' },
    },
  } as EphemeralAccessRequest;
}

function deny(req: EphemeralAccessRequest): EphemeralAccessRequest {
  return {
    ...req,
    status: {
      ...req.status,
      conditions: [
        ...(req.status?.conditions ?? []),
        {
          type: 'Denied',
          status: 'True',
          reason: 'Denied',
          message: 'incident closed',
          lastTransitionTime: '2026-11-25T12:02:00Z',
        },
      ],
      decidedBy: { username: 'security@example.com' },
    },
  } as EphemeralAccessRequest;
}

const REQUIRED = accessPolicy({ approval: { mode: 'Required' } });

describe('resolution (Pending)', () => {
  it('Automatic: records resolvedAccess, starts the clock at resolution and moves to Applying', () => {
    const decision = decide(request());
    const status = decision.status!;
    expect(status.phase).toBe('Applying');
    expect(status.resolvedAccess).toMatchObject({
      accessPolicyUid: 'uid-eap',
      targetPolicyUid: 'uid-orders',
      targetPolicyGeneration: 3,
      grantedDuration: '1800s',
      targetDatabaseFingerprint: FINGERPRINT,
      memberships: [{ role: 'reader', member: 'alice', inherit: true }],
    });
    expect(status.resolvedAccess?.bundleHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(status.activatedAt).toBe('2026-11-25T12:00:00Z');
    expect(status.expiresAt).toBe('2026-11-25T12:30:00Z');
    expect(status.approvalExpiresAt).toBe('2026-11-25T12:15:00Z');
    expect(decision.transition).toMatchObject({ from: 'Pending', to: 'Applying' });
    expect(decision.deadline).toEqual({ kind: 'expiry', at: T0 + 30 * MIN });
    const req = after(request(), decision);
    expect(cond(req, 'Resolved')).toMatchObject({ status: 'True', reason: 'AccessPolicyResolved' });
    expect(cond(req, 'Ready')).toMatchObject({ status: 'True', reason: 'Applying' });
  });

  it('asks for the finalizer on a request that lacks it', () => {
    const decision = decide(request(undefined, {}, { finalizers: [] }));
    expect(decision.actions).toEqual([{ kind: 'addFinalizer' }]);
  });

  it('Required: moves to PendingApproval without starting the clock, deadline approvalExpiresAt', () => {
    const decision = decide(request(), { policy: REQUIRED });
    expect(decision.status?.phase).toBe('PendingApproval');
    expect(decision.status?.expiresAt).toBeUndefined();
    expect(decision.deadline).toEqual({ kind: 'approval', at: T0 + 15 * MIN });
  });

  it.each([
    [
      'a missing justification the policy requires',
      { justification: { required: true } },
      {},
      'spec.justification is required',
    ],
    ['a requested duration over the maximum', {}, { requestedDuration: '3h' }, 'exceeds the maximumDuration'],
    ['no duration at all', { defaultDuration: null }, {}, 'spec.requestedDuration is required'],
    [
      'a subject the target does not declare',
      {},
      { subject: { role: 'mallory' } },
      'spec.subject.role mallory',
    ],
    [
      'an access policy that is not accepted',
      { memberships: [{ role: 'ghost', inherit: true }] },
      {},
      'RoleNotFound',
    ],
  ] as const)(
    'stays Pending with Resolved=False/InvalidRequest and lastError for %s',
    (_n, policySpec, reqSpec, text) => {
      const req = request(undefined, reqSpec as never);
      const decision = decide(req, { policy: accessPolicy(policySpec as never) });
      expect(decision.status?.phase).toBe('Pending');
      expect(decision.status?.resolvedAccess).toBeUndefined();
      expect(decision.status?.lastError).toContain(text);
      expect(cond(after(req, decision), 'Resolved')).toMatchObject({
        status: 'False',
        reason: 'InvalidRequest',
      });
      expect(decision.actions).toEqual([]);
    },
  );

  it('stays Pending with Resolved=False/Suspended while the access policy or the target is suspended', () => {
    for (const world of [
      { policy: accessPolicy({ suspend: true }) },
      { target: target({ suspend: true }) },
    ]) {
      const req = request();
      const decision = decide(req, world);
      expect(decision.status?.phase).toBe('Pending');
      expect(cond(after(req, decision), 'Resolved')).toMatchObject({ status: 'False', reason: 'Suspended' });
    }
  });

  it('stays Pending when the target database cannot be identified', () => {
    const decision = decide(request(), { fingerprint: { ok: false, message: 'Secret db is missing' } });
    expect(decision.status?.phase).toBe('Pending');
    expect(decision.status?.lastError).toContain('Secret db is missing');
  });

  it('a request denied before resolution ends Denied', () => {
    const decision = decide(deny(request()), { policy: REQUIRED });
    expect(decision.status?.phase).toBe('Denied');
  });
});

describe('approval (PendingApproval)', () => {
  it('waits for a decision and keeps the approval deadline', () => {
    const req = pendingApproval();
    const decision = decide(req, { policy: REQUIRED, now: T0 + MIN });
    expect(decision.status).toBeNull();
    expect(decision.deadline).toEqual({ kind: 'approval', at: T0 + 15 * MIN });
  });

  it('an approval with the bound bundleHash and grantedDuration moves to Applying and starts the clock then', () => {
    const req = approve(pendingApproval());
    const decision = decide(req, { policy: REQUIRED, now: T0 + 5 * MIN });
    expect(decision.status?.phase).toBe('Applying');
    expect(decision.transition?.reason).toBe('ApprovedBundleApplying');
    expect(decision.status?.activatedAt).toBe('2026-11-25T12:05:00Z');
    expect(decision.status?.expiresAt).toBe('2026-11-25T12:35:00Z');
    // The person's decision stays exactly as written.
    expect(cond(after(req, decision), 'Approved')).toEqual(cond(req, 'Approved'));
  });

  it('an approval with a wrong bundleHash is refused: InvalidRequestState, lastError, no activation', () => {
    const req = approve(pendingApproval(), { bundleHash: `sha256:${'0'.repeat(64)}` });
    const decision = decide(req, { policy: REQUIRED, now: T0 + MIN });
    expect(decision.status?.phase).toBe('PendingApproval');
    expect(decision.status?.lastError).toContain('bundleHash sha256:0000');
    expect(cond(after(req, decision), 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidRequestState',
    });
    expect(decision.actions).toEqual([]);
  });

  it('an approval with a wrong grantedDuration is refused', () => {
    const req = approve(pendingApproval(), { grantedDuration: '30m' });
    const decision = decide(req, { policy: REQUIRED, now: T0 + MIN });
    expect(decision.status?.phase).toBe('PendingApproval');
    expect(decision.status?.lastError).toContain(
      'grantedDuration 30m is not resolvedAccess.grantedDuration 1800s',
    );
  });

  it('lapses to ApprovalExpired at approvalExpiresAt, even with a late approval', () => {
    const req = approve(pendingApproval());
    const decision = decide(req, { policy: REQUIRED, now: T0 + 15 * MIN });
    expect(decision.status?.phase).toBe('ApprovalExpired');
  });

  it('waits while suspended, and still lapses at the deadline', () => {
    const suspended = accessPolicy({ approval: { mode: 'Required' }, suspend: true });
    const req = approve(pendingApproval());
    expect(decide(req, { policy: suspended, now: T0 + MIN }).status?.phase ?? 'PendingApproval').toBe(
      'PendingApproval',
    );
    expect(decide(req, { policy: suspended, now: T0 + 16 * MIN }).status?.phase).toBe('ApprovalExpired');
  });

  it('is Cancelled (AccessPolicyChanged) when the granted duration would now differ', () => {
    const req = pendingApproval();
    const changed = accessPolicy({ approval: { mode: 'Required' }, defaultDuration: '45m' });
    const decision = decide(req, { policy: changed, now: T0 + MIN });
    expect(decision.status?.phase).toBe('Cancelled');
    expect(decision.transition?.reason).toBe('AccessPolicyChanged');
  });

  it('is Cancelled when the approval mode changed to Automatic', () => {
    const decision = decide(pendingApproval(), { now: T0 + MIN });
    expect(decision.status?.phase).toBe('Cancelled');
  });

  it('Denied ends it at once', () => {
    expect(decide(deny(pendingApproval()), { policy: REQUIRED }).status?.phase).toBe('Denied');
  });
});

describe('activation (Applying)', () => {
  it('creates the activation plan, then asks the executor once it exists, then becomes Active', () => {
    const req = applying();
    expect(decide(req).actions).toEqual([{ kind: 'createPlan', operation: 'Activate' }]);
    expect(decide(req, { activation: 'Applying' }).actions).toEqual([
      { kind: 'sendScoped', operation: 'Activate' },
    ]);
    const done = decide(req, { activation: 'Applied', now: T0 + 1000 });
    expect(done.status?.phase).toBe('Active');
    expect(done.transition?.reason).toBe('MembershipsGranted');
    expect(cond(after(req, done), 'Applied')).toMatchObject({ status: 'True', reason: 'MembershipsGranted' });
    expect(done.deadline).toEqual({ kind: 'expiry', at: T0 + 30 * MIN });
  });

  it('does not activate before the finalizer is on the request', () => {
    const req = { ...applying(), metadata: { ...applying().metadata, finalizers: [] } };
    expect(decide(req).actions).toEqual([{ kind: 'addFinalizer' }]);
  });

  it('does not activate before the target carries the finalizer that keeps it until the revoke', () => {
    const unguarded = { ...target(), guarded: false };
    const decision = decide(applying(), { target: unguarded });
    expect(decision.actions).toEqual([]);
    expect(decision.waiting).toBe(true);
    expect(decide(applying()).actions).toEqual([{ kind: 'createPlan', operation: 'Activate' }]);
  });

  it('does not activate before the target has a managed database identity', () => {
    const unplanned = { ...target(), managedDatabaseIdentity: null };
    const decision = decide(applying(), { target: unplanned });
    expect(decision.actions).toEqual([]);
    expect(decision.status?.lastError).toContain('no managed database identity');
  });

  it('a failed activation ends Failed with the plan error (nothing was granted: one transaction)', () => {
    const decision = decide(applying(), { activation: 'Failed' });
    expect(decision.status?.phase).toBe('Failed');
    expect(decision.status?.lastError).toContain('RoleMissing');
  });

  it('Required: re-checks the attested approval while Applying', () => {
    const req = after(
      approve(pendingApproval()),
      decide(approve(pendingApproval()), { policy: REQUIRED, now: T0 + MIN }),
    );
    expect(req.status?.phase).toBe('Applying');
    expect(decide(req, { policy: REQUIRED, now: T0 + MIN }).actions).toEqual([
      { kind: 'createPlan', operation: 'Activate' },
    ]);
  });

  it('expired before activation started: Cancelled ExpiredBeforeActivation, never a fresh duration', () => {
    const decision = decide(applying(), { now: T0 + 31 * MIN });
    expect(decision.status?.phase).toBe('Cancelled');
    expect(decision.transition?.reason).toBe('ExpiredBeforeActivation');
  });

  it('expired during activation: waits for the running activation, then revokes, then Ended ExpiredDuringActivation', () => {
    const req = applying();
    const late = T0 + 31 * MIN;
    expect(decide(req, { activation: 'Applying', now: late }).actions).toEqual([
      { kind: 'sendScoped', operation: 'Activate' },
    ]);
    expect(decide(req, { activation: 'Applied', now: late }).actions).toEqual([
      { kind: 'createPlan', operation: 'Revoke' },
    ]);
    const ended = decide(req, { activation: 'Applied', revoke: 'Applied', now: late });
    expect(ended.status?.phase).toBe('Ended');
    expect(ended.transition?.reason).toBe('ExpiredDuringActivation');
  });

  it('suspension cancels it (AccessPolicySuspended), revoking first when activation ran', () => {
    const suspended = accessPolicy({ suspend: true });
    expect(decide(applying(), { policy: suspended }).status?.phase).toBe('Cancelled');
    const started = decide(applying(), { policy: suspended, activation: 'Applied' });
    expect(started.actions).toEqual([{ kind: 'createPlan', operation: 'Revoke' }]);
    const done = decide(applying(), { policy: suspended, activation: 'Applied', revoke: 'Applied' });
    expect(done.status?.phase).toBe('Cancelled');
    expect(done.transition?.reason).toBe('AccessPolicySuspended');
  });

  it('a bundle change cancels it (AccessPolicyChanged)', () => {
    const changed = accessPolicy({ memberships: [{ role: 'writer', inherit: true }] });
    expect(decide(applying(), { policy: changed }).transition?.reason).toBe('AccessPolicyChanged');
  });
});

describe('active access, expiry and revocation', () => {
  it('stays Active until expiresAt', () => {
    const decision = decide(active(), { activation: 'Applied', now: T0 + 29 * MIN });
    expect(decision.status).toBeNull();
    expect(decision.deadline).toEqual({ kind: 'expiry', at: T0 + 30 * MIN });
  });

  it('at expiresAt moves to Revoking (AccessExpired) and creates the revoke plan', () => {
    const decision = decide(active(), { activation: 'Applied', now: T0 + 30 * MIN });
    expect(decision.status?.phase).toBe('Revoking');
    expect(decision.transition?.reason).toBe('AccessExpired');
    expect(decision.actions).toEqual([{ kind: 'createPlan', operation: 'Revoke' }]);
  });

  it('Active runs to its expiry even while the policy is suspended or changed', () => {
    const decision = decide(active(), {
      policy: accessPolicy({ suspend: true, defaultDuration: '1h' }),
      activation: 'Applied',
      now: T0 + MIN,
    });
    expect(decision.status).toBeNull();
  });

  it('Revoking: revoke plan Applied → Ended (MembershipsRevoked) with endedAt', () => {
    const revoking = after(active(), decide(active(), { activation: 'Applied', now: T0 + 30 * MIN }));
    expect(
      decide(revoking, { activation: 'Applied', revoke: 'Applying', now: T0 + 30 * MIN }).actions,
    ).toEqual([{ kind: 'sendScoped', operation: 'Revoke' }]);
    const ended = decide(revoking, { activation: 'Applied', revoke: 'Applied', now: T0 + 30 * MIN + 2000 });
    expect(ended.status?.phase).toBe('Ended');
    expect(ended.transition?.reason).toBe('MembershipsRevoked');
    expect(ended.status?.endedAt).toBe('2026-11-25T12:30:02Z');
    expect(cond(after(revoking, ended), 'Applied')).toMatchObject({
      status: 'False',
      reason: 'MembershipsRevoked',
    });
  });

  it('retained memberships end it as MembershipBecamePermanent', () => {
    const revoking = after(active(), decide(active(), { activation: 'Applied', now: T0 + 30 * MIN }));
    const retained = {
      ...revoking,
      status: {
        ...revoking.status,
        retainedMemberships: [{ role: 'reader', member: 'alice', inherit: true }],
      },
    };
    const ended = decide(retained, { activation: 'Applied', revoke: 'Applied', now: T0 + 30 * MIN });
    expect(ended.transition?.reason).toBe('MembershipBecamePermanent');
    expect(ended.status?.retainedMemberships).toEqual([{ role: 'reader', member: 'alice', inherit: true }]);
  });

  it('the revoke plan records what was kept: a request whose status never got the copy still ends right', () => {
    // The scheduler died between the executor's result (written on the plan) and the request's final write.
    const revoking = after(active(), decide(active(), { activation: 'Applied', now: T0 + 30 * MIN }));
    const kept = [{ role: 'reader', member: 'alice', inherit: true }];
    const base = plan(revoking, 'Revoke', 'Applied');
    const revokePlan = {
      ...base,
      status: planStatusOfResult(
        {
          outcome: 'Applied',
          operation: 'Revoke',
          statements: [],
          reason: 'MembershipsRevoked',
          message: '0 statement(s)',
          retained: kept,
        },
        '2026-11-25T12:30:01Z',
      ),
    } as unknown as PostgresPolicyPlan;
    const ended = decideRequest({
      request: revoking,
      resolution: null,
      target: target(),
      activationPlan: plan(revoking, 'Activate', 'Applied'),
      revokePlan,
      now: T0 + 30 * MIN + 2000,
    });
    expect(ended.status?.phase).toBe('Ended');
    expect(ended.transition?.reason).toBe('MembershipBecamePermanent');
    expect(ended.status?.retainedMemberships).toEqual(kept);
  });

  it('an AlreadyApplied report never overwrites the record of the revoke that ran', () => {
    const again = {
      outcome: 'Applied' as const,
      operation: 'Revoke' as const,
      statements: [],
      reason: 'AlreadyApplied',
      message: 'the plan is already Applied; nothing was run again',
    };
    expect(planStatusOfResult(again, '2026-11-25T12:31:00Z')).toBeNull();
  });

  it('a failed revocation stays Revoking with lastError and re-arms the plan', () => {
    const revoking = after(active(), decide(active(), { activation: 'Applied', now: T0 + 30 * MIN }));
    const decision = decide(revoking, { activation: 'Applied', revoke: 'Failed', now: T0 + 31 * MIN });
    expect(decision.status?.phase).toBe('Revoking');
    expect(decision.status?.lastError).toContain('revocation failed, retrying: RoleMissing');
    expect(decision.actions).toEqual([{ kind: 'createPlan', operation: 'Revoke' }]);
  });

  it('Denied on an Active request revokes at once, then ends Denied', () => {
    const denied = deny(active());
    const first = decide(denied, { activation: 'Applied', now: T0 + MIN });
    expect(first.status?.phase).toBe('Revoking');
    expect(first.actions).toEqual([{ kind: 'createPlan', operation: 'Revoke' }]);
    const revoking = after(denied, first);
    const done = decide(revoking, { activation: 'Applied', revoke: 'Applied', now: T0 + MIN });
    expect(done.status?.phase).toBe('Denied');
    expect(cond(after(revoking, done), 'Denied')).toEqual(cond(denied, 'Denied'));
  });
});

describe('deletion (finalizer)', () => {
  it('an Active request revokes before its finalizer goes, logged as Revoked (RequestDeleted)', () => {
    const req = deleting(active());
    expect(decide(req, { activation: 'Applied' }).actions).toEqual([
      { kind: 'createPlan', operation: 'Revoke' },
    ]);
    const done = decide(req, { activation: 'Applied', revoke: 'Applied' });
    expect(done.actions).toEqual([{ kind: 'removeFinalizer' }]);
    expect(done.transition).toMatchObject({ from: 'Active', to: 'Revoked', reason: 'RequestDeleted' });
    expect(done.status).toBeNull();
  });

  it('a Pending or PendingApproval request just releases its finalizer', () => {
    for (const req of [request(), pendingApproval()]) {
      const decision = decide(deleting(req), { policy: REQUIRED });
      expect(decision.actions).toEqual([{ kind: 'removeFinalizer' }]);
      expect(decision.transition).toBeNull();
    }
  });

  it('an Applying request whose activation is running waits for it before revoking', () => {
    const decision = decide(deleting(applying()), { activation: 'Applying' });
    expect(decision.actions).toEqual([{ kind: 'sendScoped', operation: 'Activate' }]);
  });
});

describe('integrity', () => {
  it('never acts on a tampered snapshot', () => {
    const req = applying();
    const forged = {
      ...req,
      status: {
        ...req.status,
        resolvedAccess: {
          ...req.status!.resolvedAccess!,
          memberships: [{ role: 'writer', member: 'alice', inherit: true }],
        },
      },
    };
    const decision = decide(forged, { activation: 'Applied' });
    expect(decision.actions).toEqual([]);
    expect(decision.status?.phase).toBe('Applying');
    expect(decision.status?.lastError).toContain('does not verify');
  });

  it('never obeys a plan with its deterministic name that is not this request’s: deletes it, does not stall', () => {
    const req = applying();
    const other = plan(req, 'Activate', 'Applied');
    const foreign = {
      ...other,
      spec: { ...other.spec, origin: { kind: 'EphemeralAccessRequest', name: 'x', uid: 'someone-else' } },
    };
    const decision = decideRequest({
      request: req,
      resolution: null,
      target: target(),
      activationPlan: foreign,
      revokePlan: undefined,
      now: T0,
    });
    expect(decision.actions).toEqual([{ kind: 'deletePlan', operation: 'Activate' }]);
    expect(decision.waiting).toBe(true);
    expect(decision.status?.phase).toBe('Applying');
    expect(decision.status?.lastError).toContain('is not the Activate plan');
    expect(decision.status?.lastError).toContain('not obeyed');
  });

  it('a squatted revoke plan name never releases a deleted request without its revoke', () => {
    const req = deleting(active());
    const ours = plan(req, 'Revoke', 'Applied');
    const squatter = {
      ...ours,
      spec: { ...ours.spec, origin: { kind: 'EphemeralAccessRequest', name: 'x', uid: 'not-the-request' } },
    };
    const decision = decideRequest({
      request: req,
      resolution: null,
      target: target(),
      activationPlan: plan(req, 'Activate', 'Applied'),
      revokePlan: squatter,
      now: T0 + MIN,
    });
    expect(decision.actions).toEqual([{ kind: 'deletePlan', operation: 'Revoke' }]);
    expect(decision.transition).toBeNull();
  });

  it('re-derives its own conditions after a merge patch replaced the array with only the decision', () => {
    const approved = approve(pendingApproval());
    const patched = {
      ...approved,
      status: {
        ...approved.status,
        conditions: approved.status!.conditions!.filter((c) => c.type === 'Approved'),
      },
    };
    const decision = decide(patched, { policy: REQUIRED, now: T0 + MIN });
    const types = decision.status!.conditions!.map((c) => c.type).sort();
    expect(types).toEqual(['Applied', 'Approved', 'Ready', 'Resolved'].filter((t) => t !== 'Applied'));
  });

  it('only writes the conditions types the spec allows, at most 8', () => {
    const req = deny(active());
    const decision = decide(req, { activation: 'Applied' });
    for (const c of decision.status!.conditions!)
      expect(['Approved', 'Denied', 'Resolved', 'Ready', 'Applied']).toContain(c.type);
    expect(decision.status!.conditions!.length).toBeLessThanOrEqual(8);
  });

  it('terminal phases do nothing (and release a finalizer on deletion)', () => {
    for (const phase of ['Ended', 'Revoked', 'Cancelled', 'Denied', 'ApprovalExpired', 'Failed'] as const) {
      const req = request({ phase });
      expect(decide(req)).toMatchObject({ status: null, actions: [], transition: null });
      const gone = { ...req, metadata: { ...req.metadata, deletionTimestamp: 'x' } };
      expect(decide(gone).actions).toEqual([{ kind: 'removeFinalizer' }]);
    }
  });

  it('a later expiresAt written into status is corrected back and does not delay the revoke (ADR 0020)', () => {
    const req = active();
    const forged = { ...req, status: { ...req.status, expiresAt: '2026-11-25T13:30:00Z' } };
    const before = decide(forged, { activation: 'Applied', now: T0 + 10 * MIN });
    expect(before.status?.expiresAt).toBe('2026-11-25T12:30:00Z');
    expect(before.deadline).toEqual({ kind: 'expiry', at: T0 + 30 * MIN });
    const due = decide(forged, { activation: 'Applied', now: T0 + 30 * MIN });
    expect(due.status?.phase).toBe('Revoking');
    expect(due.actions).toEqual([{ kind: 'createPlan', operation: 'Revoke' }]);
  });

  it('the clock starts no later than the activation plan was created, whatever activatedAt says', () => {
    const req = active();
    const late = { ...req, status: { ...req.status, activatedAt: '2026-11-25T12:20:00Z' } };
    const activation = {
      ...plan(late, 'Activate', 'Applied'),
      metadata: { ...plan(late, 'Activate', 'Applied').metadata, creationTimestamp: '2026-11-25T12:00:01Z' },
    };
    const decision = decideRequest({
      request: late,
      resolution: null,
      target: target(),
      activationPlan: activation,
      revokePlan: undefined,
      now: T0 + 31 * MIN,
    });
    expect(decision.status?.phase).toBe('Revoking');
    expect(decision.status?.expiresAt).toBe('2026-11-25T12:30:01Z');
  });

  it('an activatedAt written before the scheduler started the clock cancels the request before any grant', () => {
    const forgedApproval = approve(pendingApproval());
    const early = {
      ...forgedApproval,
      status: { ...forgedApproval.status, activatedAt: '2026-11-25T13:00:00Z' },
    };
    const decision = decide(early, { policy: REQUIRED, now: T0 + MIN });
    expect(decision.status?.phase).toBe('Cancelled');
    expect(decision.transition?.reason).toBe('StatusTampered');
    expect(decision.status?.lastError).toContain('status.activatedAt');
    expect(decision.actions).toEqual([]);
    // A phase forged to Applying with a clock in the future is never activated either.
    const req = applying();
    const future = { ...req, status: { ...req.status, activatedAt: '2026-11-25T13:00:00Z' } };
    const applyingDecision = decide(future, { now: T0 + MIN });
    expect(applyingDecision.status?.phase).toBe('Cancelled');
    expect(applyingDecision.actions).toEqual([]);
  });

  it('a terminal phase written over a granted, unrevoked request is written back; the duty to revoke stays', () => {
    for (const forgedPhase of ['Ended', 'Cancelled', 'Failed', 'Denied'] as const) {
      const req = active();
      const forged = { ...req, status: { ...req.status, phase: forgedPhase } };
      const decision = decide(forged, { activation: 'Applied', now: T0 + MIN });
      expect(decision.status?.phase).toBe('Active');
      expect(decision.transition).toMatchObject({
        from: forgedPhase,
        to: 'Active',
        reason: 'UnrevokedTerminalPhase',
      });
      expect(decision.status?.lastError).toContain('was not written by the access-scheduler');
      expect(decision.actions).toEqual([]);
      // Deleted right after the forged write: the finalizer stays, the phase is written back first.
      const gone = deleting(forged);
      const onDelete = decide(gone, { activation: 'Applied', now: T0 + MIN });
      expect(onDelete.status?.phase).toBe('Active');
      expect(onDelete.actions).not.toContainEqual({ kind: 'removeFinalizer' });
      // Then the deletion revokes before the finalizer goes.
      const next = after(gone, onDelete);
      expect(decide(next, { activation: 'Applied', now: T0 + MIN }).actions).toEqual([
        { kind: 'createPlan', operation: 'Revoke' },
      ]);
    }
    // An activation still running comes back as Applying; an applied revoke makes the terminal phase true.
    const running = { ...applying(), status: { ...applying().status, phase: 'Ended' as const } };
    expect(decide(running, { activation: 'Applying' }).status?.phase).toBe('Applying');
    const revoked = { ...active(), status: { ...active().status, phase: 'Ended' as const } };
    expect(decide(revoked, { activation: 'Applied', revoke: 'Applied' }).status).toBeNull();
  });

  it('a second pass over its own write changes nothing', () => {
    for (const [req, world] of [
      [applying(), {}],
      [active(), { activation: 'Applied' }],
      [pendingApproval(), { policy: REQUIRED }],
    ] as const) {
      expect(decide(req, world as World).status).toBeNull();
    }
  });
});

describe('a request waiting for a decision says when decisions are unauthenticated (ADR 0026)', () => {
  it('Ready=True reason ApprovalUnauthenticated in PendingApproval, the phase name otherwise', () => {
    const unauthenticated = decide(request(), { policy: REQUIRED, decisionsUnauthenticated: true });
    const req = after(request(), unauthenticated);
    expect(req.status?.phase).toBe('PendingApproval');
    expect(cond(req, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'ApprovalUnauthenticated',
      message: expect.stringMatching(/decisions are unauthenticated/),
    });
    // Automatic requests wait for nobody: nothing to say.
    const automatic = after(request(), decide(request(), { decisionsUnauthenticated: true }));
    expect(cond(automatic, 'Ready')?.reason).toBe('Applying');
  });

  it('flips both ways on the next pass, and writes nothing while it holds', () => {
    const waiting = pendingApproval();
    expect(cond(waiting, 'Ready')?.reason).toBe('PendingApproval');
    const flipped = decide(waiting, { policy: REQUIRED, decisionsUnauthenticated: true });
    const now = after(waiting, flipped);
    expect(cond(now, 'Ready')?.reason).toBe('ApprovalUnauthenticated');
    expect(decide(now, { policy: REQUIRED, decisionsUnauthenticated: true }).status).toBeNull();
    const back = after(now, decide(now, { policy: REQUIRED, decisionsUnauthenticated: false }));
    expect(cond(back, 'Ready')?.reason).toBe('PendingApproval');
  });
});
