// Read-your-writes for candidate status: a status the planner wrote stands in for the cached copy until the
// cache shows a newer version, so the candidate pass of the same reconcile never puts back what promotion
// recognition just replaced (status writes replace the whole status).
import { contentDigest } from '@rolepolicy/policy';
import type { CachedObject } from '@rolepolicy/contracts';
import { policy as basePolicy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import type { UnkeyedCommand } from '../planning/gateway-commands.js';
import { CandidatePlanner, type CandidatePlannerDeps } from './candidate-planner.js';
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
