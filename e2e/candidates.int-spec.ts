// End to end (emulator, NATS, PostgreSQL, the five services): a PostgresPolicyCandidate is planned in its
// policy's context and never executes SQL; `replaces`, base moves, denial and immutability; promotion runs
// the approved candidate plan exactly once, and is refused on a moved base or without approval; a target
// preview binds the other database and never runs on the parent's.
import { CandidateResources } from './support/candidates.js';
import { condition, sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import type { PostgresPolicyCandidate, PostgresPolicyPlan } from '@rolepolicy/kube';

let stack: Stack;
let db: TargetDatabase;
let candidates: CandidateResources;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('cand');
  candidates = new CandidateResources(stack.kubeConfig, stack.namespace);
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

const roles = (...names: string[]) => names.map((name) => ({ name: stack.role(name), login: false }));

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [stack.role(role)])).length === 1;
}

/** A policy converged on `content` under manual approval (created under auto, then switched). */
async function convergedPolicy(name: string, content: Record<string, unknown>): Promise<void> {
  await stack.resources.createPolicy(name, {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    ...content,
  });
  await stack.reconciled(name);
  await stack.resources.patchPolicySpec(name, { approval: 'manual' });
  await stack.reconciled(name);
}

/** Edits the policy's content under manual approval and approves its own plan until it converged. */
async function movePolicy(name: string, content: Record<string, unknown>): Promise<void> {
  await stack.resources.patchPolicySpec(name, content);
  const plan = await waitFor('the policy plan for the edit', async () =>
    (await stack.resources.plans(name)).find((p) => p.status?.phase === 'Pending'),
  );
  await stack.resources.approve(plan.metadata.name!);
  await stack.reconciled(name);
}

const describeCandidate = (name: string) => () => candidates.get(name).then((c) => c.status);

async function candidateWhere(
  name: string,
  what: string,
  test: (c: PostgresPolicyCandidate) => boolean,
): Promise<PostgresPolicyCandidate> {
  return waitFor(
    `candidate ${name}: ${what}`,
    async () => {
      const c = await candidates.get(name);
      return test(c) ? c : undefined;
    },
    { describe: describeCandidate(name), timeoutMs: 30_000 },
  );
}

const planned = (name: string) =>
  candidateWhere(
    name,
    'Planned with a plan',
    (c) => c.status?.phase === 'Planned' && c.status.planRef != null,
  );

async function planOf(candidate: PostgresPolicyCandidate): Promise<PostgresPolicyPlan> {
  const plan = await stack.resources.plan(candidate.status!.planRef!.name);
  if (plan === undefined) throw new Error('planRef names no plan');
  return plan;
}

test('a candidate is planned in its policy context with origin fields, and no SQL runs', async () => {
  await convergedPolicy('plain', { roles: roles('plain_app') });
  const policy = await stack.resources.policy('plain');
  const proposal = { roles: roles('plain_app', 'plain_new') };
  const filed = await candidates.create('plain-add', 'plain', proposal);
  const candidate = await planned('plain-add');
  const plan = await planOf(candidate);
  expect(plan.spec.origin).toEqual({
    kind: 'PostgresPolicyCandidate',
    name: 'plain-add',
    uid: filed.metadata.uid,
    contentDigest: candidate.status?.contentDigest,
    contentDigestEncoding: 'rolepolicy.io/policy-content/v2',
    baseContentDigest: policy?.status?.content_digest,
    policyUid: policy?.metadata.uid,
  });
  expect(plan.metadata.ownerReferences).toEqual([
    expect.objectContaining({ kind: 'PostgresPolicyCandidate', uid: filed.metadata.uid, controller: true }),
  ]);
  expect(candidate.status?.observedGeneration).toBe(1);
  expect(condition(candidate.status?.conditions, 'Ready')).toMatchObject({
    status: 'True',
    reason: 'Planned',
  });
  expect(plan.status?.phase).toBe('Pending');
  expect(plan.status?.sqlInline).toContain(stack.role('plain_new'));
  await sleep(1500);
  expect(await roleExists('plain_new')).toBe(false);
});

test('candidate spec is immutable', async () => {
  await expect(candidates.patchSpec('plain-add', { replaces: 'other' })).rejects.toThrow(
    'candidate spec is immutable',
  );
});

test('promotion with an approved plan: the approved SQL runs once, then the candidate is Promoted', async () => {
  await convergedPolicy('promo', { roles: roles('promo_app') });
  const proposal = { roles: roles('promo_app', 'promo_new') };
  await candidates.create('promo-add', 'promo', proposal);
  const plan = await planOf(await planned('promo-add'));
  await stack.resources.approve(plan.metadata.name!);
  await sleep(1500);
  expect(await roleExists('promo_new')).toBe(false); // approval alone never executes a candidate plan
  await stack.resources.patchPolicySpec('promo', proposal); // the merge
  const promoted = await candidateWhere('promo-add', 'Promoted', (c) => c.status?.phase === 'Promoted');
  expect(condition(promoted.status?.conditions, 'Promoted')).toMatchObject({ status: 'True' });
  expect(await roleExists('promo_new')).toBe(true);
  expect((await stack.resources.plan(plan.metadata.name!))?.status?.phase).toBe('Applied');
  // The policy never planned those effects itself: the candidate's plan was its plan.
  const own = await stack.resources.plans('promo');
  expect(own.filter((p) => p.status?.changeDigest === plan.status?.changeDigest)).toEqual([]);
  const policy = await stack.reconciled('promo');
  expect(policy.status?.content_digest).toBe(promoted.status?.contentDigest);
  // What `kubectl describe postgrespolicycandidate promo-add` lists: the lifecycle as Events.
  const reasons = await waitFor('the candidate lifecycle Events', async () => {
    const events = await stack.core.listNamespacedEvent({
      namespace: stack.namespace,
      fieldSelector: 'involvedObject.name=promo-add',
    });
    const seen = events.items
      .filter(
        (e) => e.involvedObject.kind === 'PostgresPolicyCandidate' && e.involvedObject.name === 'promo-add',
      )
      .map((e) => e.reason);
    return seen.includes('CandidatePromoted') ? seen : undefined;
  });
  expect(reasons).toEqual(expect.arrayContaining(['CandidatePlanned', 'CandidatePromoted']));
});

test('replaces: the predecessor is Superseded once its successor is planned', async () => {
  await convergedPolicy('chain', { roles: roles('chain_app') });
  await candidates.create('chain-v1', 'chain', { roles: roles('chain_app', 'chain_v1') });
  await planned('chain-v1');
  await candidates.create(
    'chain-v2',
    'chain',
    { roles: roles('chain_app', 'chain_v2') },
    { replaces: 'chain-v1' },
  );
  await planned('chain-v2');
  const v1 = await candidateWhere('chain-v1', 'Superseded', (c) => c.status?.phase === 'Superseded');
  expect(condition(v1.status?.conditions, 'Superseded')).toMatchObject({
    status: 'True',
    reason: 'Replaced',
  });
  const v1Plans = await candidates.plans('chain-v1');
  expect(v1Plans.map((p) => p.status?.phase)).toEqual(['Superseded']);
});

test('the parent moves: the candidate plan is superseded and re-planned against the new base', async () => {
  await convergedPolicy('moves', { roles: roles('moves_app') });
  await candidates.create('moves-add', 'moves', { roles: roles('moves_app', 'moves_new') });
  const first = await planOf(await planned('moves-add'));
  await movePolicy('moves', { roles: roles('moves_app', 'moves_other') });
  const moved = await stack.resources.policy('moves');
  const replanned = await candidateWhere(
    'moves-add',
    'a plan on the new base',
    (c) => c.status?.planRef != null && c.status.planRef.name !== first.metadata.name,
  );
  const second = await planOf(replanned);
  expect(second.spec.origin?.baseContentDigest).toBe(moved?.status?.content_digest);
  const old = await stack.resources.plan(first.metadata.name!);
  expect(old?.status?.phase).toBe('Superseded');
  expect(condition(old?.status?.conditions, 'Superseded')?.reason).toBe('SupersededByBaseChange');
});

test('promotion is refused on a moved base: the approved plan never runs', async () => {
  await convergedPolicy('stale', { roles: roles('stale_app') });
  const proposal = { roles: roles('stale_app', 'stale_new') };
  await candidates.create('stale-add', 'stale', proposal);
  const approved = await planOf(await planned('stale-add'));
  await stack.resources.approve(approved.metadata.name!);
  await movePolicy('stale', { roles: roles('stale_app', 'stale_other') });
  await stack.resources.patchPolicySpec('stale', proposal); // merge on top of a moved base
  const refused = await candidateWhere(
    'stale-add',
    'Promoted=False/PromotionBaseChanged',
    (c) => condition(c.status?.conditions, 'Promoted')?.reason === 'PromotionBaseChanged',
  );
  expect(condition(refused.status?.conditions, 'Promoted')?.message).toContain('moved');
  await sleep(1500);
  expect(await roleExists('stale_new')).toBe(false);
  expect((await stack.resources.plan(approved.metadata.name!))?.status?.phase).toBe('Superseded');
});

test('promotion without approval under manual approval does not execute', async () => {
  await convergedPolicy('unapproved', { roles: roles('unapproved_app') });
  const proposal = { roles: roles('unapproved_app', 'unapproved_new') };
  await candidates.create('unapproved-add', 'unapproved', proposal);
  await planned('unapproved-add');
  await stack.resources.patchPolicySpec('unapproved', proposal);
  await candidateWhere(
    'unapproved-add',
    'Promoted=False/PromotedWithoutApproval',
    (c) => condition(c.status?.conditions, 'Promoted')?.reason === 'PromotedWithoutApproval',
  );
  const own = await waitFor('the policy plans its own changes', async () =>
    (await stack.resources.plans('unapproved')).find((p) => p.status?.phase === 'Pending'),
  );
  expect(own.spec.origin ?? null).toBeNull();
  await sleep(1500);
  expect(await roleExists('unapproved_new')).toBe(false);
});

test('a denied candidate plan supersedes the candidate', async () => {
  await convergedPolicy('denied', { roles: roles('denied_app') });
  await candidates.create('denied-add', 'denied', { roles: roles('denied_app', 'denied_new') });
  const plan = await planOf(await planned('denied-add'));
  await stack.resources.deny(plan.metadata.name!);
  const superseded = await candidateWhere(
    'denied-add',
    'Superseded',
    (c) => c.status?.phase === 'Superseded',
  );
  expect(condition(superseded.status?.conditions, 'Superseded')).toMatchObject({ reason: 'PlanDenied' });
  expect((await stack.resources.plan(plan.metadata.name!))?.status?.phase).toBe('Rejected');
  expect(await roleExists('denied_new')).toBe(false);
});

test('a target preview binds the second database and can never execute on the parent', async () => {
  const second = await stack.createDatabase('cand2');
  await convergedPolicy('preview', { roles: roles('preview_app') });
  const parentPlanFingerprint = (await planOf(await planned('plain-add'))).status?.targetLogicalFingerprint;
  const proposal = { roles: roles('preview_app', 'preview_new') };
  await candidates.create('preview-add', 'preview', proposal, {
    target: { connectionRef: { secretName: second.secretName, key: 'DATABASE_URL' } },
  });
  const candidate = await planned('preview-add');
  const plan = await planOf(candidate);
  // Both connections are URL Secrets: the identity names the preview's Secret, never a database (ADR 0018).
  expect(plan.spec.managedDatabaseIdentity).toContain(`"${second.secretName}"`);
  expect(plan.spec.managedDatabaseIdentity).not.toContain(second.database);
  expect(plan.status?.targetLogicalFingerprint).not.toBe(parentPlanFingerprint);
  expect(condition(candidate.status?.conditions, 'Ready')?.message).toContain('never execute');
  // Approved and merged, the preview plan still never runs: the policy plans (and waits) on its own.
  await stack.resources.approve(plan.metadata.name!);
  await stack.resources.patchPolicySpec('preview', proposal);
  await candidateWhere(
    'preview-add',
    'Promoted=False/PreviewNotPromotable',
    (c) => condition(c.status?.conditions, 'Promoted')?.reason === 'PreviewNotPromotable',
  );
  await waitFor('the policy plans its own changes', async () =>
    (await stack.resources.plans('preview')).find((p) => p.status?.phase === 'Pending'),
  );
  await sleep(1500);
  expect(await roleExists('preview_new')).toBe(false);
  expect((await stack.resources.plan(plan.metadata.name!))?.status?.phase).not.toBe('Applied');
});
