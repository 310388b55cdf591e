// The candidate lifecycle (pure): planning in the parent's context, gating, supersession, expiry, budget,
// denial, `replaces`, promotion recognition and recording. Steps are applied to an in-memory namespace so
// multi-pass scenarios read like the spec.
import { CONTENT_DIGEST_ENCODING, contentDigest } from '@rolepolicy/policy';
import { decideReconcile, type PostgresPolicy, type PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import {
  at,
  computed,
  policy as basePolicy,
} from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { candidateCommand, candidateCommandsOf } from './candidate-commands.js';
import {
  decideCandidates,
  plannable,
  type CandidateOutcome,
  type CandidatePassInput,
  type PolicyGate,
} from './lifecycle.js';
import { recognisePromotion } from './promotion.js';
import { DEFAULT_CANDIDATE_SETTINGS, type Candidate, type CandidateStatus } from './resources.js';
import type { CandidateStep } from './steps.js';

const original = { roles: [{ name: 'app', login: false }] };
const proposed = { roles: [{ name: 'app', login: true }] };
const OPEN: PolicyGate = { kind: 'open' };

function policyWith(content: object, approval: 'manual' | 'auto' = 'manual', status = {}): PostgresPolicy {
  return basePolicy(
    { ...content, approval },
    {},
    { content_digest: contentDigest(content).digest, ...status },
  );
}

function candidate(
  name: string,
  content: object,
  extra: Partial<Candidate['spec']> = {},
  created = at(0),
): Candidate {
  return {
    metadata: { name, namespace: 'team-a', uid: `uid-${name}`, generation: 1, creationTimestamp: created },
    spec: { content: content as Record<string, unknown>, policyRef: { name: 'orders' }, ...extra },
  };
}

/** An in-memory namespace the steps are applied to. */
class Namespace {
  plans: PostgresPolicyPlan[] = [];
  candidates: Candidate[] = [];
  steps: CandidateStep[] = [];

  pass(policy: PostgresPolicy, gate: PolicyGate, outcome: (c: Candidate) => CandidateOutcome, now = at(60)) {
    const input: CandidatePassInput = {
      policy,
      gate,
      candidates: this.candidates,
      plans: this.plans,
      now,
      settings: DEFAULT_CANDIDATE_SETTINGS,
    };
    const outcomes = new Map(plannable(input).map((c) => [c.metadata.name, outcome(c)]));
    this.steps = [...decideCandidates(input, outcomes)];
    for (const step of this.steps) {
      // Every step must be expressible as allowed gateway commands.
      candidateCommandsOf(step, policy);
      if (step.kind === 'createPlan')
        this.plans.push({ ...step.plan, metadata: { ...step.plan.metadata, creationTimestamp: now } });
      if (step.kind === 'patchPlanStatus') {
        this.plans = this.plans.map((p) =>
          p.metadata.name === step.patch.name ? { ...p, status: { ...p.status, ...step.patch.status } } : p,
        );
      }
      if (step.kind === 'writeCandidateStatus') this.setStatus(step.candidate.metadata.name, step.status);
    }
    return this.steps;
  }

  setStatus(name: string, status: CandidateStatus) {
    this.candidates = this.candidates.map((c) => (c.metadata.name === name ? { ...c, status } : c));
  }

  get(name: string): Candidate {
    return this.candidates.find((c) => c.metadata.name === name)!;
  }

  plan(name: string): PostgresPolicyPlan {
    return this.plans.find((p) => p.metadata.name === name)!;
  }

  decide(planName: string, decision: 'Approved' | 'Denied') {
    this.plans = this.plans.map((p) =>
      p.metadata.name === planName
        ? {
            ...p,
            status: {
              ...p.status,
              conditions: [{ type: decision, status: 'True', reason: decision, message: 'by alice' }],
              decidedBy: { username: 'alice' },
            },
          }
        : p,
    );
  }
}

const computedFor =
  (label: string, changes = 1): ((c: Candidate) => CandidateOutcome) =>
  () => ({
    kind: 'computed',
    plan: computed(label, changes),
    preview: null,
  });

const ready = (c: Candidate) => c.status?.conditions?.find((x) => x.type === 'Ready');

describe('candidate planning', () => {
  it('plans a candidate in the parent context: origin, owner, never approved, Planned with planRef', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    const parent = policyWith(original, 'auto');
    ns.pass(parent, OPEN, computedFor('p1'));
    const c = ns.get('add-login');
    const plan = ns.plan(c.status!.planRef!.name);
    expect(c.status).toMatchObject({
      phase: 'Planned',
      contentDigest: contentDigest(proposed).digest,
      observedGeneration: 1,
    });
    expect(ready(c)).toMatchObject({ status: 'True', reason: 'Planned' });
    expect(plan.spec.origin).toEqual({
      kind: 'PostgresPolicyCandidate',
      name: 'add-login',
      uid: 'uid-add-login',
      contentDigest: contentDigest(proposed).digest,
      contentDigestEncoding: CONTENT_DIGEST_ENCODING,
      baseContentDigest: contentDigest(original).digest,
      policyUid: 'uid-orders',
    });
    expect(plan.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'PostgresPolicyCandidate', uid: 'uid-add-login', controller: true }),
    ]);
    // approval: auto on the parent never approves a candidate plan
    expect(plan.status?.phase).toBe('Pending');
    expect(plan.status?.decidedBy).toBeNull();
    expect(plan.status?.conditions?.find((x) => x.type === 'Approved')?.status).toBe('False');
    expect(plan.status?.revalidatedGeneration).toBe(1);
  });

  it('a second pass with the same effects keeps the plan (no churn, status unchanged)', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    expect(ns.pass(policyWith(original), OPEN, computedFor('p1'))).toEqual([]);
  });

  it('no effects: Planned, Ready=True/NoEffects, no plan', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('noop', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('none', 0));
    expect(ns.plans).toEqual([]);
    expect(ns.get('noop').status).toMatchObject({ phase: 'Planned', planRef: null });
    expect(ready(ns.get('noop'))).toMatchObject({ status: 'True', reason: 'NoEffects' });
  });

  it('a parent that is not converged blocks planning with Ready=False/BlockedByActivePolicy', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    const gate: PolicyGate = { kind: 'blocked', message: 'policy plan orders-1 awaits a decision' };
    ns.pass(policyWith(original), gate, () => {
      throw new Error('must not plan while blocked');
    });
    expect(ns.plans).toEqual([]);
    expect(ns.get('add-login').status?.phase).toBe('Pending');
    expect(ready(ns.get('add-login'))).toMatchObject({ status: 'False', reason: 'BlockedByActivePolicy' });
  });

  it('a moved base supersedes the plan (SupersededByBaseChange) and re-plans against the new base', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    const first = ns.get('add-login').status!.planRef!.name;
    const moved = { roles: [{ name: 'app', login: false }, { name: 'other' }] };
    ns.pass(policyWith(moved), OPEN, computedFor('p1'));
    expect(ns.plan(first).status?.phase).toBe('Superseded');
    expect(ns.plan(first).status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Superseded', reason: 'SupersededByBaseChange' }),
    );
    const second = ns.plan(ns.get('add-login').status!.planRef!.name);
    expect(second.metadata.name).not.toBe(first);
    expect(second.spec.origin?.baseContentDigest).toBe(contentDigest(moved).digest);
  });

  it('a denied plan supersedes the candidate (PlanDenied) and marks the plan Rejected', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    const planName = ns.get('add-login').status!.planRef!.name;
    ns.decide(planName, 'Denied');
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    expect(ns.get('add-login').status?.phase).toBe('Superseded');
    expect(ns.get('add-login').status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Superseded', status: 'True', reason: 'PlanDenied' }),
    );
    expect(ns.plan(planName).status?.phase).toBe('Rejected');
  });

  it('spec.replaces supersedes the predecessor once the successor has its plan', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('v1', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    const v1Plan = ns.get('v1').status!.planRef!.name;
    ns.candidates.push(
      candidate('v2', { roles: [{ name: 'app', login: true, comment: 'x' }] }, { replaces: 'v1' }, at(30)),
    );
    ns.pass(policyWith(original), OPEN, (c) => computedFor(c.metadata.name)(c));
    expect(ns.get('v2').status?.phase).toBe('Planned');
    expect(ns.get('v1').status?.phase).toBe('Superseded');
    expect(ns.get('v1').status?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'Superseded',
        reason: 'Replaced',
        message: 'replaced by candidate v2',
      }),
    );
    expect(ns.plan(v1Plan).status?.phase).toBe('Superseded');
  });

  it('expiry and budget: stale candidates expire, the newest beyond the budget wait', () => {
    const ns = new Namespace();
    const settings = { ...DEFAULT_CANDIDATE_SETTINGS, budget: 1, ttlSeconds: 3600 };
    ns.candidates = [
      candidate('ancient', proposed, {}, at(-7200)),
      candidate('first', { roles: [{ name: 'a' }] }, {}, at(0)),
      candidate('second', { roles: [{ name: 'b' }] }, {}, at(10)),
    ];
    const input: CandidatePassInput = {
      policy: policyWith(original),
      gate: OPEN,
      candidates: ns.candidates,
      plans: [],
      now: at(60),
      settings,
    };
    expect(plannable(input).map((c) => c.metadata.name)).toEqual(['first']);
    const outcomes = new Map([['first', computedFor('a')(ns.candidates[1]!)]]);
    const writes = decideCandidates(input, outcomes).filter((s) => s.kind === 'writeCandidateStatus');
    const byName = new Map(writes.map((s) => [s.candidate.metadata.name, s.status]));
    expect(byName.get('ancient')?.phase).toBe('Superseded');
    expect(byName.get('ancient')?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Superseded', reason: 'Expired' }),
    );
    expect(byName.get('second')?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'CandidateBudgetExceeded' }),
    );
    expect(byName.get('first')?.phase).toBe('Planned');
  });
});

describe('secrets never reach candidate status', () => {
  it('a planning failure that quotes a connection URL is redacted', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('leaky', proposed)];
    ns.pass(policyWith(original), OPEN, () => ({
      kind: 'failed',
      reason: 'DatabaseConnectionFailed',
      message: 'connect postgres://app:hunter2@db.internal/orders failed',
    }));
    const message = ready(ns.get('leaky'))?.message ?? '';
    expect(message).toContain('postgres://[REDACTED]@db.internal/orders');
    expect(message).not.toContain('hunter2');
  });
});

describe('a candidate never executes SQL or creates a Secret', () => {
  it('the candidate command sink refuses Secrets and policies', () => {
    const secret = {
      v: 1 as const,
      command: 'delete-resource' as const,
      target: { apiVersion: 'v1', kind: 'Secret', namespace: 'a', name: 's' },
    };
    expect(() => candidateCommand(secret)).toThrow('never sends delete-resource for Secret');
    const policyStatus = {
      v: 1 as const,
      command: 'patch-status' as const,
      target: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicy', namespace: 'a', name: 'p' },
      status: {},
    };
    expect(() => candidateCommand(policyStatus)).toThrow();
  });

  it('no candidate step requests execution, in any state', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    const parent = policyWith(original, 'auto');
    ns.pass(parent, OPEN, computedFor('p1'));
    ns.decide(ns.get('add-login').status!.planRef!.name, 'Approved');
    const kinds = ns.pass(parent, OPEN, computedFor('p1')).map((s) => s.kind as string);
    expect(kinds).not.toContain('requestExecution');
  });
});

describe('promotion', () => {
  function approvedCandidate(): { ns: Namespace; planName: string } {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    const planName = ns.get('add-login').status!.planRef!.name;
    ns.decide(planName, 'Approved');
    return { ns, planName };
  }

  it('manual approval: the approved plan pinned to the previous content is handed to the policy and executed', () => {
    const { ns, planName } = approvedCandidate();
    // merged: the policy spec carries the candidate content; its status still has the previous digest
    const merged = basePolicy(
      { ...proposed, approval: 'manual' },
      { generation: 2 },
      {
        content_digest: contentDigest(original).digest,
      },
    );
    const recognition = recognisePromotion(merged, ns.candidates, ns.plans, at(90));
    expect(recognition.handOver?.metadata.name).toBe(planName);
    const decision = decideReconcile({
      policy: merged,
      plans: ns.plans,
      conflict: { kind: 'clear' },
      outcome: { kind: 'computed', plan: computed('p1') },
      now: at(90),
      jitter: 0,
      promoted: { plan: recognition.handOver!, previousContentDigest: recognition.previous },
    });
    const execution = decision.steps.find((s) => s.kind === 'requestExecution');
    expect(execution).toMatchObject({ request: { planName, changeDigest: computed('p1').changeDigest } });
    // the previous content stays stamped until the promotion converged (an interrupted one is re-recognised)
    expect(decision.status.content_digest).toBe(contentDigest(original).digest);
  });

  it('a stale base pin is refused: Promoted=False/PromotionBaseChanged names the moved base, nothing handed over', () => {
    const { ns } = approvedCandidate();
    const moved = { roles: [{ name: 'app', login: false }, { name: 'other' }] };
    const merged = basePolicy(
      { ...proposed, approval: 'manual' },
      { generation: 3 },
      {
        content_digest: contentDigest(moved).digest,
      },
    );
    const recognition = recognisePromotion(merged, ns.candidates, ns.plans, at(90));
    expect(recognition.handOver).toBeNull();
    const report = recognition.reports[0] as Extract<CandidateStep, { kind: 'writeCandidateStatus' }>;
    const promoted = report.status.conditions?.find((c) => c.type === 'Promoted');
    expect(promoted).toMatchObject({ status: 'False', reason: 'PromotionBaseChanged' });
    expect(promoted?.message).toContain(contentDigest(moved).digest);
  });

  it('without approval under manual: nothing is handed over (PromotedWithoutApproval)', () => {
    const ns = new Namespace();
    ns.candidates = [candidate('add-login', proposed)];
    ns.pass(policyWith(original), OPEN, computedFor('p1'));
    const merged = basePolicy(
      { ...proposed, approval: 'manual' },
      {},
      { content_digest: contentDigest(original).digest },
    );
    const recognition = recognisePromotion(merged, ns.candidates, ns.plans, at(90));
    expect(recognition.handOver).toBeNull();
    const report = recognition.reports[0] as Extract<CandidateStep, { kind: 'writeCandidateStatus' }>;
    expect(report.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Promoted', reason: 'PromotedWithoutApproval' }),
    );
  });

  it('a merge seen before the policy converged on it promotes nothing (the status digest is the old content)', () => {
    const { ns, planName } = approvedCandidate();
    // The spec already carries the candidate content, the status still the previous convergence.
    const merged = basePolicy(
      { ...proposed, approval: 'manual' },
      {},
      { content_digest: contentDigest(original).digest },
    );
    ns.pass(merged, OPEN, computedFor('p1'));
    expect(ns.get('add-login').status?.phase).not.toBe('Promoted');
    expect(ns.plan(planName).status?.phase).toBe('Pending');
  });

  it('after convergence the candidate is Promoted, a duplicate retired, and a repeat pass changes nothing', () => {
    const { ns, planName } = approvedCandidate();
    ns.candidates.push(candidate('duplicate', proposed, {}, at(20)));
    ns.plans = ns.plans.map((p) =>
      p.metadata.name === planName ? { ...p, status: { ...p.status, phase: 'Applied' } } : p,
    );
    const converged = policyWith(proposed);
    ns.pass(converged, OPEN, () => {
      throw new Error('equal content is never planned');
    });
    expect(ns.get('add-login').status).toMatchObject({ phase: 'Promoted', planRef: { name: planName } });
    expect(ns.get('add-login').status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Promoted', status: 'True' }),
    );
    expect(ns.get('duplicate').status?.phase).toBe('Superseded');
    expect(ns.pass(converged, OPEN, computedFor('x'))).toEqual([]);
  });
});
