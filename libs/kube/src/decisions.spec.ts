// The decision a person writes with `kubectl rolepolicy approve|deny` and `access approve|deny`: refused
// before any write when the object cannot take it (the message names the field and the rule), and, when
// written, admitted by the CRD rules in one status update (decision + decidedBy, bound to the bundle).
import { admit } from './admission/admit.js';
import { applyMergePatch } from './conformance/merge-patch.js';
import {
  decidedBy,
  planDecisionPatch,
  planDecisionProblem,
  requestDecisionPatch,
  requestDecisionProblem,
} from './decisions.js';
import type { EphemeralAccessRequest, PostgresPolicyPlan } from './types.js';

const NOW = '2026-11-27T12:00:00Z';
const HASH = `sha256:${'a'.repeat(64)}`;

function plan(status: Record<string, unknown>): PostgresPolicyPlan {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: { name: 'shop-3f2c1e9a0b4d', namespace: 'team', resourceVersion: '41' },
    spec: {
      managedDatabaseIdentity: 'db',
      policyGeneration: 2,
      policyRef: { name: 'shop' },
      reconciliationMode: 'authoritative',
    },
    status: {
      phase: 'Pending',
      changeDigest: HASH,
      conditions: [
        { type: 'Computed', status: 'True', reason: 'PlanComputed' },
        { type: 'Approved', status: 'False', reason: 'PendingApproval' },
      ],
      ...status,
    },
  } as PostgresPolicyPlan;
}

function request(status: Record<string, unknown>): EphemeralAccessRequest {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: { name: 'alice-read', namespace: 'team', resourceVersion: '7' },
    spec: {
      accessPolicyRef: { name: 'read' },
      subject: { role: 'alice' },
      requestedBy: { username: 'alice@example.com', groups: [] },
    },
    status: {
      phase: 'PendingApproval',
      approvalExpiresAt: '2026-11-27T12:15:00Z',
      conditions: [{ type: 'Resolved', status: 'True', reason: 'Resolved' }],
      resolvedAccess: {
        accessPolicyGeneration: 1,
        accessPolicyUid: 'u1',
        bundleEncoding: 'rolepolicy.io/ephemeral-membership-bundle/v1',
        bundleHash: HASH,
        grantedDuration: '1800s',
        memberships: [{ role: 'reader', member: 'alice', inherit: true }],
        targetDatabaseFingerprint: `sha256:${'b'.repeat(64)}`,
        targetPolicyGeneration: 3,
        targetPolicyUid: 'u2',
      },
      ...status,
    },
  } as EphemeralAccessRequest;
}

/** Applies the patch as the API server does and runs the CRD's admission on the /status write. */
function admitStatusPatch(kind: 'PostgresPolicyPlan' | 'EphemeralAccessRequest', old: object, patch: object) {
  const object = applyMergePatch(old as never, patch as never);
  return admit({ kind, operation: 'UPDATE', object, oldObject: old, subresource: 'status' });
}

describe('plan decisions', () => {
  it('an approval keeps the planner conditions, replaces Approved=False and carries decidedBy and resourceVersion', () => {
    const pending = plan({});
    const patch = planDecisionPatch(pending, 'Approved', { username: 'bob', groups: ['dba'] }, NOW);
    expect(patch.metadata.resourceVersion).toBe('41');
    expect(patch.status.decidedBy).toEqual({ username: 'bob', groups: ['dba'] });
    expect(patch.status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Computed=True',
      'Approved=True',
    ]);
    expect(patch.status.conditions[1]).toMatchObject({ reason: 'ApprovedByUser', last_transition_time: NOW });
    expect(admitStatusPatch('PostgresPolicyPlan', pending, patch).allowed).toBe(true);
  });

  it('a denial is admitted next to the Approved=False placeholder', () => {
    const pending = plan({});
    const patch = planDecisionPatch(pending, 'Denied', { username: 'bob' }, NOW, 'not during the freeze');
    expect(patch.status.conditions.at(-1)).toMatchObject({
      type: 'Denied',
      message: 'not during the freeze',
    });
    expect(admitStatusPatch('PostgresPolicyPlan', pending, patch).allowed).toBe(true);
  });

  it('a plan already decided is refused, naming the rule (and the API would refuse it too)', () => {
    const decided = plan({
      phase: 'Approved',
      decidedBy: { username: 'carol', groups: [] },
      conditions: [{ type: 'Approved', status: 'True', reason: 'ApprovedByUser' }],
    });
    expect(planDecisionProblem(decided, 'Denied')).toBe(
      'status.conditions: the plan is already Approved (decidedBy carol); plan decisions are terminal',
    );
    const result = admitStatusPatch(
      'PostgresPolicyPlan',
      decided,
      planDecisionPatch(decided, 'Denied', { username: 'bob' }, NOW),
    );
    expect(result.allowed).toBe(false);
  });

  it.each([
    ['Superseded', 'status.phase is Superseded: only a Pending plan can be approved'],
    ['Applied', 'status.phase is Applied: only a Pending plan can be approved'],
  ])('a %s plan is refused', (phase, message) => {
    expect(planDecisionProblem(plan({ phase }), 'Approved')).toBe(message);
  });

  it('an approval needs the change digest it binds to', () => {
    expect(planDecisionProblem(plan({ changeDigest: null }), 'Approved')).toMatch(/^status\.changeDigest/);
    expect(planDecisionProblem(plan({ changeDigest: null }), 'Denied')).toBeNull();
    expect(planDecisionProblem(plan({}), 'Approved')).toBeNull();
  });
});

describe('request decisions', () => {
  const now = new Date('2026-11-27T12:05:00Z');

  it("an approval binds the request's own bundleHash and grantedDuration and is admitted", () => {
    const pending = request({});
    expect(requestDecisionProblem(pending, 'Approved', now)).toBeNull();
    const patch = requestDecisionPatch(pending, 'Approved', { username: 'sec', uid: 'u-9' }, NOW, 'OPS-1');
    expect(patch.metadata.resourceVersion).toBe('7');
    expect(patch.status.conditions.at(-1)).toEqual({
      type: 'Approved',
      status: 'True',
      reason: 'Approved',
      message: 'OPS-1',
      lastTransitionTime: NOW,
      bundleHash: HASH,
      grantedDuration: '1800s',
    });
    expect(patch.status.decidedBy).toEqual({ username: 'sec', uid: 'u-9', groups: [] });
    expect(admitStatusPatch('EphemeralAccessRequest', pending, patch).allowed).toBe(true);
  });

  it('an expired approval window is refused, naming status.approvalExpiresAt', () => {
    const late = new Date('2026-11-27T12:20:00Z');
    expect(requestDecisionProblem(request({}), 'Approved', late)).toBe(
      'status.approvalExpiresAt 2026-11-27T12:15:00Z has passed: the approval window expired, a late approval loses (ApprovalExpired)',
    );
  });

  it('an unresolved request cannot be approved: there is no bundle to bind to', () => {
    expect(
      requestDecisionProblem(request({ phase: 'Pending', resolvedAccess: null }), 'Approved', now),
    ).toMatch(/^status\.resolvedAccess is not recorded yet \(phase Pending\)/);
  });

  it('Denied is a kill switch for active access but not for ended requests', () => {
    expect(requestDecisionProblem(request({ phase: 'Active' }), 'Denied', now)).toBeNull();
    expect(requestDecisionProblem(request({ phase: 'Active' }), 'Approved', now)).toBe(
      'status.phase is Active: only a PendingApproval request can be approved',
    );
    expect(requestDecisionProblem(request({ phase: 'Ended' }), 'Denied', now)).toBe(
      'status.phase is Ended: the request has ended',
    );
  });

  it('a second decision is refused before the write and by the CRD', () => {
    const decided = request({
      decidedBy: { username: 'sec', groups: [] },
      conditions: [{ type: 'Approved', status: 'True', reason: 'Approved', bundleHash: HASH }],
    });
    expect(requestDecisionProblem(decided, 'Denied', now)).toBe(
      'status.conditions: the request is already Approved (decidedBy sec); approval decisions are terminal; to end the access now, delete the request (its revocation runs before it goes)',
    );
    const result = admitStatusPatch(
      'EphemeralAccessRequest',
      decided,
      requestDecisionPatch(decided, 'Denied', { username: 'eve' }, NOW),
    );
    expect(result.allowed).toBe(false);
  });
});

describe('decidedBy', () => {
  it('keeps at most 64 groups the CRD accepts', () => {
    const groups = Array.from({ length: 70 }, (_, i) => `g${i}`);
    expect(decidedBy({ username: 'x', groups: ['', ...groups] }).groups).toHaveLength(64);
  });
});
