// Read-your-writes for candidate status: a status the planner wrote stands in for the cached copy until the
// cache shows a newer version, so the candidate pass of the same reconcile never puts back what promotion
// recognition just replaced (status writes replace the whole status).
import { contentDigest } from '@rolepolicy/policy';
import type { CachedObject } from '@rolepolicy/contracts';
import { policy as basePolicy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import type { UnkeyedCommand } from '../planning/gateway-commands.js';
import { CandidatePlanner, policyGate, type CandidatePlannerDeps } from './candidate-planner.js';
import { DEFAULT_CANDIDATE_SETTINGS, type CandidateStatus } from './resources.js';

const original = { roles: [{ name: 'app', login: false }] };
const proposed = { roles: [{ name: 'app', login: true }] };

function storedCandidate(resourceVersion: string, status?: object): CachedObject {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyCandidate',
    metadata: {
      name: 'add-login',
      namespace: 'team-a',
      uid: 'uid-add-login',
      generation: 1,
      resourceVersion,
    },
    spec: { policyRef: { name: 'orders' }, content: proposed },
    ...(status ? { status } : {}),
  } as unknown as CachedObject;
}

function plannerOver(cached: { current: CachedObject }) {
  const sent: UnkeyedCommand[] = [];
  const deps = {
    cache: { list: () => [cached.current] },
    send: async (command: UnkeyedCommand) => void sent.push(command),
    recordEvent: async () => undefined,
    planCreated: () => undefined,
    settings: DEFAULT_CANDIDATE_SETTINGS,
    inspectTimeoutMs: 1000,
    log: { log: () => undefined, warn: () => undefined },
  } as unknown as CandidatePlannerDeps;
  return { planner: new CandidatePlanner(deps), sent };
}

// The policy carries the candidate's content; its last convergence was the original content.
const merged = basePolicy(
  { ...proposed, approval: 'manual' },
  {},
  { content_digest: contentDigest(original).digest },
);

const promotedReason = (status: CandidateStatus | undefined) =>
  status?.conditions?.find((c) => c.type === 'Promoted')?.reason;

describe('candidate status read-your-writes', () => {
  it('a reported status is what the next read sees while the cache still shows the version it replaced', async () => {
    const cached = { current: storedCandidate('5') };
    const { planner, sent } = plannerOver(cached);
    await planner.recognise(merged, []);
    expect(sent.map((c) => c.command)).toEqual(['patch-status']);
    const [candidate] = planner.candidatesOf(merged);
    expect(promotedReason(candidate?.status)).toBe('PromotedWithoutApproval');
  });

  it('a newer cached version wins over the remembered write', async () => {
    const cached = { current: storedCandidate('5') };
    const { planner } = plannerOver(cached);
    await planner.recognise(merged, []);
    cached.current = storedCandidate('6', { phase: 'Pending', conditions: [] });
    const [candidate] = planner.candidatesOf(merged);
    expect(candidate?.status).toEqual({ phase: 'Pending', conditions: [] });
    cached.current = storedCandidate('5'); // the old version again (a resync): the write is forgotten
    expect(planner.candidatesOf(merged)[0]?.status).toBeUndefined();
  });

  it('a second read of an unchanged status sends nothing again', async () => {
    const cached = { current: storedCandidate('5') };
    const { planner, sent } = plannerOver(cached);
    await planner.recognise(merged, []);
    await planner.recognise(merged, []);
    expect(sent).toHaveLength(1);
  });
});

describe('policyGate', () => {
  const decision = (kind: 'reconciled' | 'observed' | 'awaiting_approval', plan: string | null) => ({
    kind,
    steps: [],
    status: { current_plan_ref: plan === null ? null : { name: plan } },
    requeueAfterSeconds: 300,
  });

  it('opens once the policy converged, also when the pass that verified an apply keeps its plan reference', () => {
    expect(policyGate(decision('reconciled', null))).toEqual({ kind: 'open' });
    expect(policyGate(decision('reconciled', 'orders-3'))).toEqual({ kind: 'open' });
    expect(policyGate(decision('observed', null))).toEqual({ kind: 'open' });
  });

  it('stays closed while a plan of the policy waits (a decision, an observe-mode plan)', () => {
    expect(policyGate(decision('awaiting_approval', 'orders-3')).kind).toBe('blocked');
    expect(policyGate(decision('observed', 'orders-3')).kind).toBe('blocked');
  });
});
