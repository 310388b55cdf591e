// Spec Errors: apply failure -> plan lastError + phase Failed, policy last_error; Applied converges the
// policy; a plan that had the physical identity and cannot read it at execution fails closed.
import { decideAfterExecution, FAILED_RECHECK_SECONDS } from './execution-report.js';
import { buildPlan } from './plan-builder.js';
import { autoApprovePatch } from './plan-patches.js';
import type { PostgresPolicyPlan } from './resources.js';
import { at, computed, policy } from './test-support/fixtures.js';

function approved(generation = 2): PostgresPolicyPlan {
  const p = policy({}, { generation });
  const { plan } = buildPlan({
    policy: p,
    computed: computed('A'),
    existingPlanNames: [],
    now: at(0),
    autoApprove: false,
  });
  const patch = autoApprovePatch(plan, at(1));
  return { ...plan, status: { ...plan.status, ...patch.status } };
}

describe('executor report handling', () => {
  it('Applied: plan Applied with appliedAt; policy Ready=True/Reconciled and password source versions recorded', () => {
    const plan = approved(2);
    const out = decideAfterExecution({
      policy: policy({}, { generation: 2 }),
      plan,
      report: { kind: 'applied', appliedPasswordSourceVersions: { app: 'orders-gen-app:password:42' } },
      now: at(5),
      jitter: 0,
    });
    expect(out.planPatch?.status).toMatchObject({ phase: 'Applied', appliedAt: at(5), lastError: null });
    expect(out.planPatch?.status.conditions?.find((c) => c.type === 'Applied')).toMatchObject({
      status: 'True',
    });
    expect(out.status).toMatchObject({
      observed_generation: 2,
      last_successful_reconcile_time: at(5),
      applied_password_source_versions: { app: 'orders-gen-app:password:42' },
      transient_failure_count: 0,
      last_error: null,
    });
    expect(out.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
  });

  it('observed_generation is the generation the plan was confirmed against, not a newer edit', () => {
    const out = decideAfterExecution({
      policy: policy({}, { generation: 5 }),
      plan: approved(4),
      report: { kind: 'applied', appliedPasswordSourceVersions: {} },
      now: at(5),
      jitter: 0,
    });
    expect(out.status?.observed_generation).toBe(4);
  });

  it('apply failure: plan Failed with redacted lastError; policy last_error, Degraded, transient count and backoff', () => {
    const out = decideAfterExecution({
      policy: policy({}, {}, { transient_failure_count: 1 }),
      plan: approved(),
      report: {
        kind: 'failed',
        error: {
          class: 'transient',
          reason: 'ApplyFailed',
          message: `ALTER ROLE "app" PASSWORD 'pw-123' failed: deadlock detected`,
        },
      },
      now: at(5),
      jitter: 0,
    });
    expect(out.planPatch?.status).toMatchObject({ phase: 'Failed', failedAt: at(5) });
    expect(out.planPatch?.status.lastError).not.toContain('pw-123');
    expect(out.status?.last_error).not.toContain('pw-123');
    expect(out.status?.transient_failure_count).toBe(2);
    expect(out.requeueAfterSeconds).toBe(10);
    expect(out.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ApplyFailed',
    });
  });

  it('permanent apply failure: the policy is looked at again within seconds, so the retry hold takes over', () => {
    const out = decideAfterExecution({
      policy: policy(),
      plan: approved(),
      report: {
        kind: 'failed',
        error: {
          class: 'permanent',
          reason: 'InsufficientPrivileges',
          message: 'permission denied to create role',
        },
      },
      now: at(5),
      jitter: 0,
    });
    expect(out.status?.last_error).toBe('permission denied to create role');
    expect(out.status?.transient_failure_count).toBe(0);
    expect(out.requeueAfterSeconds).toBe(FAILED_RECHECK_SECONDS);
  });

  it('digest moved under the approval: the plan is Superseded and the policy is reconciled again at once', () => {
    const out = decideAfterExecution({
      policy: policy(),
      plan: approved(),
      report: {
        kind: 'refused',
        verdict: { kind: 'superseded', reason: 'Superseded', message: 'digest differs' },
      },
      now: at(5),
      jitter: 0,
    });
    expect(out.planPatch?.status.phase).toBe('Superseded');
    expect(out.status).toBeNull();
    expect(out.requeueAfterSeconds).toBe(0);
  });

  it('identity unreadable at execution: plan Failed (fail closed), policy TargetIdentityBlocked', () => {
    const out = decideAfterExecution({
      policy: policy(),
      plan: approved(),
      report: {
        kind: 'refused',
        verdict: {
          kind: 'fail_closed',
          reason: 'TargetIdentityUnavailable',
          message: 'cannot read system_identifier',
        },
      },
      now: at(5),
      jitter: 0,
    });
    expect(out.planPatch?.status.phase).toBe('Failed');
    expect(out.status?.conditions?.find((c) => c.type === 'TargetIdentityBlocked')).toMatchObject({
      status: 'True',
      reason: 'TargetIdentityUnavailable',
    });
    expect(out.status?.last_error).toContain('TargetIdentityUnavailable');
  });
});
