// What the planner writes must be admitted by the project's own CRDs (structural schema + CEL decision
// rules): plan creation, status, auto approval, a person's decision, supersede, applied and failed writes.
import { admit, applyMergePatch, type PostgresPolicyPlan as KubePlan } from '@rolepolicy/kube';
import { buildPlan } from './plan-builder.js';
import { appliedPatch, autoApprovePatch, failedPatch, supersedePatch } from './plan-patches.js';
import { decideReconcile } from './decide.js';
import {
  fromKubePlan,
  fromKubePolicy,
  toKubePlan,
  toKubePlanStatus,
  toKubePolicyStatus,
} from './kube-bridge.js';
import type { PostgresPolicyPlan, PostgresPolicyPlanStatus } from './resources.js';
import { at, computed, policy } from './test-support/fixtures.js';

type Stored = Record<string, unknown>;

function create(plan: PostgresPolicyPlan): Stored {
  const created = admit({ kind: 'PostgresPolicyPlan', operation: 'CREATE', object: toKubePlan(plan) });
  if (!created.allowed) throw new Error(`create rejected: ${created.status.message}`);
  return created.object;
}

function writeStatus(
  stored: Stored,
  status: PostgresPolicyPlanStatus,
): { allowed: boolean; object: Stored; message: string } {
  const next = applyMergePatch(stored, { status: toKubePlanStatus(status) });
  const result = admit({
    kind: 'PostgresPolicyPlan',
    operation: 'UPDATE',
    subresource: 'status',
    object: next,
    oldObject: stored,
  });
  return result.allowed
    ? { allowed: true, object: result.object, message: '' }
    : { allowed: false, object: stored, message: result.status.message };
}

function planOf(stored: Stored): PostgresPolicyPlan {
  const plan = fromKubePlan(stored as unknown as KubePlan);
  if (!plan) throw new Error('stored plan lost its name');
  return plan;
}

function published(
  autoApprove: boolean,
  redactedSql?: string,
): { built: PostgresPolicyPlan; stored: Stored } {
  const c =
    redactedSql === undefined
      ? computed('A')
      : computed('A', 1, { sql: { sqlHash: 'h', redactedSql, statementCount: 1 } });
  const { plan } = buildPlan({
    policy: policy(),
    computed: c,
    existingPlanNames: [],
    now: at(0),
    autoApprove,
  });
  const stored = create(plan);
  const status = writeStatus(stored, plan.status ?? {});
  expect(status.message).toBe('');
  return { built: plan, stored: status.object };
}

describe('plans the planner builds pass admission of the PostgresPolicyPlan CRD', () => {
  it('a pending plan and its full status are admitted', () => {
    const { stored } = published(false);
    expect(planOf(stored).status?.phase).toBe('Pending');
  });

  it('an auto-approved plan (Approved=True with decidedBy in one write) is admitted', () => {
    const { stored } = published(true);
    expect(planOf(stored).status?.decidedBy?.username).toBe('system:rolepolicy-planner(auto-approval)');
  });

  it('a plan whose SQL lives in a ConfigMap (sqlRef) is admitted', () => {
    const { stored } = published(false, 'GRANT SELECT ON TABLE "a"."b" TO "r";\n'.repeat(2000));
    expect(planOf(stored).status?.sqlRef?.compression).toBe('gzip');
  });

  it('auto approval of a pending plan, then Applied, are admitted', () => {
    const { stored } = published(false);
    const approved = writeStatus(stored, autoApprovePatch(planOf(stored), at(1)).status);
    expect(approved.message).toBe('');
    const applied = writeStatus(approved.object, appliedPatch(planOf(approved.object), at(2)).status);
    expect(applied.message).toBe('');
    expect(planOf(applied.object).status?.phase).toBe('Applied');
  });

  it('Failed after approval is admitted', () => {
    const { stored } = published(true);
    const failed = writeStatus(stored, failedPatch(planOf(stored), 'ApplyFailed', 'boom', at(2)).status);
    expect(failed.message).toBe('');
  });

  it('superseding an undecided plan (Approved=False re-stamped) is admitted', () => {
    const { stored } = published(false);
    const out = writeStatus(stored, supersedePatch(planOf(stored), { kind: 'EffectsChanged' }, at(1)).status);
    expect(out.message).toBe('');
    expect(planOf(out.object).status?.phase).toBe('Superseded');
  });

  it('superseding a decided plan keeps the decision and records why in Superseded=True', () => {
    const { stored } = published(true);
    const cause = {
      kind: 'TargetIdentity',
      reason: 'TargetIdentityUnavailable',
      message: 'the physical identity recorded on the plan cannot be read now',
    } as const;
    const out = writeStatus(stored, supersedePatch(planOf(stored), cause, at(1)).status);
    expect(out.message).toBe('');
    const status = planOf(out.object).status;
    expect(status?.decidedBy?.username).toBe('system:rolepolicy-planner(auto-approval)');
    expect(status?.conditions?.find((c) => c.type === 'Approved')?.status).toBe('True');
    expect(status?.conditions?.find((c) => c.type === 'Superseded')).toMatchObject({
      status: 'True',
      reason: 'TargetIdentityUnavailable',
      message: cause.message,
    });
  });

  it('the CRD refuses to flip a recorded decision, so the planner never tries (plan decisions are terminal)', () => {
    const { stored } = published(true);
    const flip = writeStatus(stored, {
      conditions: [{ type: 'Approved', status: 'False', reason: 'Superseded', message: 'x' }],
    });
    expect(flip.allowed).toBe(false);
    expect(flip.message).toContain('plan decisions are terminal');
  });
});

describe('reading generated types', () => {
  it('fills change-summary counters the API server left at their default', () => {
    const read = fromKubePolicy({
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      metadata: { name: 'orders', namespace: 'team-a', uid: 'u', generation: 2 },
      spec: { connection: { secretRef: { name: 'db' } } },
      status: { change_summary: { total: 3 } },
    });
    expect(read?.status?.change_summary).toMatchObject({ total: 3, grants_added: 0 });
  });

  it('refuses a policy without uid or generation (it cannot own plans)', () => {
    expect(
      fromKubePolicy({
        apiVersion: 'rolepolicy.io/v1alpha1',
        kind: 'PostgresPolicy',
        metadata: { name: 'x' },
        spec: { connection: {} },
      }),
    ).toBeNull();
  });
});

describe('policy statuses the planner writes pass admission of the PostgresPolicy CRD', () => {
  function storedPolicy(spec: Parameters<typeof policy>[0] = {}): Stored {
    const p = policy(spec);
    const created = admit({
      kind: 'PostgresPolicy',
      operation: 'CREATE',
      object: { ...p, metadata: { name: p.metadata.name, namespace: p.metadata.namespace } },
    });
    if (!created.allowed) throw new Error(created.status.message);
    // uid and generation are the API server's bookkeeping (the emulator's), not admission's.
    return {
      ...created.object,
      metadata: { ...(created.object['metadata'] as Stored), uid: 'uid-orders', generation: 1 },
    };
  }

  it.each([
    ['converged', {}, computed('n', 0)],
    ['auto apply requested', {}, computed('A')],
    ['awaiting approval', { approval: 'manual' as const }, computed('A')],
    ['observe', { mode: 'observe' as const, approval: null }, computed('A')],
    ['suspended', { suspend: true }, computed('A')],
    [
      'owner transfer blocked',
      { reconciliation_mode: 'adopt' as const },
      computed('A', 1, { ownerTransferBlocked: true, warnings: ['w'] }),
    ],
  ])('%s', (_label, spec, plan) => {
    const stored = storedPolicy(spec);
    const read = fromKubePolicy(stored as unknown as Parameters<typeof fromKubePolicy>[0]);
    if (!read) throw new Error('policy lost its identity');
    const decision = decideReconcile({
      policy: read,
      plans: [],
      conflict: { kind: 'clear' },
      outcome: { kind: 'computed', plan },
      now: at(0),
      jitter: 0,
    });
    const next = applyMergePatch(stored, { status: toKubePolicyStatus(decision.status) });
    const result = admit({
      kind: 'PostgresPolicy',
      operation: 'UPDATE',
      subresource: 'status',
      object: next,
      oldObject: stored,
    });
    expect(result.allowed ? '' : result.status.message).toBe('');
  });
});
