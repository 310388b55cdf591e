// What a person reads before deciding and in the listings: counts, origin, warnings, deadlines.
import type { EphemeralAccessRequest, PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/kube';

import {
  isPendingDecision,
  planRow,
  planSummaryLines,
  planWarnings,
  requestRow,
  requestSummaryLines,
  summaryText,
} from './describe.js';

const NOW = new Date('2026-11-27T12:00:00Z');

function plan(status: Record<string, unknown>, spec: Record<string, unknown> = {}): PostgresPolicyPlan {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: { name: 'shop-3f2c', namespace: 'team', creationTimestamp: '2026-11-27T11:58:00Z' },
    spec: {
      managedDatabaseIdentity: 'db',
      policyGeneration: 4,
      policyRef: { name: 'shop' },
      reconciliationMode: 'authoritative',
      ...spec,
    },
    status: {
      phase: 'Pending',
      changeDigest: 'sha256:abc',
      computedAt: '2026-11-27T11:58:00Z',
      changeSummary: { roles_created: 2, grants_added: 3, members_removed: 1, total: 6 },
      sqlStatements: 7,
      conditions: [{ type: 'Approved', status: 'False', reason: 'PendingApproval' }],
      ...status,
    },
  } as PostgresPolicyPlan;
}

const policy = {
  metadata: { name: 'shop', namespace: 'team' },
  spec: { mode: 'apply' },
  status: { plan_warnings: ['adopt mode transfers schema "app" from "old" to "owner"'] },
} as unknown as PostgresPolicy;

describe('plans', () => {
  it('summarises the non-zero counters', () => {
    expect(summaryText(plan({}).status!.changeSummary)).toBe('+2 roles, +3 grants, -1 members');
    expect(summaryText({ total: 0 })).toBe('no changes');
  });

  it('a row shows origin, counts, statements, warnings and age', () => {
    expect(planRow(plan({}), policy, NOW, false, false)).toEqual([
      'shop-3f2c',
      'policy shop',
      'Pending',
      '6',
      '+2 roles, +3 grants, -1 members',
      '7',
      '1',
      '2m',
    ]);
    const candidatePlan = plan(
      {},
      { origin: { kind: 'PostgresPolicyCandidate', name: 'shop-next', uid: 'u' } },
    );
    expect(planRow(candidatePlan, policy, NOW, true, true)).toEqual(
      expect.arrayContaining(['team', 'candidate shop-next', 'sha256:abc']),
    );
  });

  it("a candidate's plan does not inherit the policy's warnings; a truncated preview is one", () => {
    const candidatePlan = plan(
      { sqlTruncated: true },
      { origin: { kind: 'PostgresPolicyCandidate', name: 'n', uid: 'u' } },
    );
    expect(planWarnings(candidatePlan, policy)).toEqual([
      'the SQL preview was truncated to fit object size limits',
    ]);
  });

  it('an observe-mode policy warns that its plan never executes', () => {
    const observing = { ...policy, spec: { mode: 'observe' } } as unknown as PostgresPolicy;
    expect(planWarnings(plan({}), observing)).toContain(
      'the policy is in observe mode: this plan shows drift and never executes, even approved',
    );
  });

  it("shows the planner's reason when the waiting decision says more than pending", () => {
    const unauthenticated = plan({
      conditions: [
        {
          type: 'Approved',
          status: 'False',
          reason: 'ApprovalUnauthenticated',
          message: 'no admission policy',
        },
      ],
    });
    expect(planSummaryLines(unauthenticated, policy, null, NOW)).toContain(
      '  approval:   ApprovalUnauthenticated: no admission policy',
    );
    expect(planSummaryLines(plan({}), policy, null, NOW).join('\n')).not.toContain('approval:');
  });

  it('only undecided Pending plans wait for a person', () => {
    expect(isPendingDecision(plan({}))).toBe(true);
    expect(isPendingDecision(plan({ phase: 'Approved' }))).toBe(false);
    expect(
      isPendingDecision(plan({ conditions: [{ type: 'Denied', status: 'True', reason: 'DeniedByUser' }] })),
    ).toBe(false);
  });

  it('the summary before a decision names the digest, the review findings and the warnings', () => {
    const lines = planSummaryLines(plan({}), policy, { error: 1, warning: 2, info: 0 }, NOW);
    expect(lines[0]).toBe('Plan team/shop-3f2c (policy shop, authoritative, policy generation 4)');
    expect(lines).toContain('  digest:     sha256:abc');
    expect(lines).toContain(
      '  review:     1 errors, 2 warnings, 0 notes (kubectl rolepolicy review shop-3f2c)',
    );
    expect(lines.at(-1)).toBe('  warning:    adopt mode transfers schema "app" from "old" to "owner"');
  });
});

describe('access requests', () => {
  const request = {
    metadata: { name: 'orders-read-x7k2p', namespace: 'team', creationTimestamp: '2026-11-27T11:59:00Z' },
    spec: {
      accessPolicyRef: { name: 'orders-read' },
      subject: { role: 'alice' },
      requestedBy: { username: 'alice@example.com' },
      requestedDuration: '30m',
      justification: 'INC-42',
    },
    status: {
      phase: 'PendingApproval',
      approvalExpiresAt: '2026-11-27T12:14:00Z',
      resolvedAccess: {
        bundleHash: 'sha256:b',
        grantedDuration: '1800s',
        memberships: [{ role: 'reader', member: 'alice', inherit: true }],
      },
    },
  } as unknown as EphemeralAccessRequest;

  it('a row shows the granted duration and the approval deadline while pending', () => {
    expect(requestRow(request, NOW, false)).toEqual([
      'orders-read-x7k2p',
      'orders-read',
      'alice',
      'PendingApproval',
      '30m',
      'in 14m',
      'alice@example.com',
      '60s',
    ]);
  });

  it('the summary before a decision shows what is granted, to whom, and the deadline', () => {
    const lines = requestSummaryLines(request, NOW);
    expect(lines).toEqual(
      expect.arrayContaining([
        '  subject:       alice',
        '  duration:      30m (1800s)',
        '  grants:        reader to alice',
        '  bundle:        sha256:b',
        '  decide before: 2026-11-27T12:14:00Z (in 14m)',
      ]),
    );
  });
});
