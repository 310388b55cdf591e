// End to end, the review lifecycle of the spec's States section: observe mode computes drift and never runs
// SQL (even when someone approves), plan mode waits for a person, a denial ends Rejected with nothing
// executed, and an edit that leaves the effects unchanged keeps the pending plan (revalidated).
import { condition, sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('review');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

async function roleExists(role: string): Promise<boolean> {
  const rows = await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
  return rows.length === 1;
}

/** The policy's only Pending plan, once the planner published it and named it in the policy status. */
async function pendingPlan(policy: string) {
  return waitFor(
    `a Pending plan of ${policy} named by current_plan_ref`,
    async () => {
      const p = await stack.resources.policy(policy);
      const ref = p?.status?.current_plan_ref?.name;
      const plan = ref ? await stack.resources.plan(ref) : undefined;
      return plan?.status?.phase === 'Pending' ? plan : undefined;
    },
    { timeoutMs: 25_000, describe: () => stack.resources.policy(policy).then((p) => p?.status) },
  );
}

test('observe mode computes drift without SQL, and an approval written on its plan never runs', async () => {
  const role = stack.role('observed');
  await stack.resources.createPolicy('watch', {
    connection: db.connection,
    mode: 'observe',
    approval: 'manual',
    roles: [{ name: role, login: false }],
  });
  const plan = await pendingPlan('watch');
  expect(plan.status?.sqlInline).toContain('CREATE ROLE');
  const policy = await stack.resources.policy('watch');
  expect(condition(policy?.status?.conditions, 'Drifted')).toMatchObject({
    status: 'True',
    reason: 'DriftDetected',
  });
  expect(condition(policy?.status?.conditions, 'Ready')).toMatchObject({ status: 'True', reason: 'Planned' });
  expect(policy?.status?.observed_generation).toBe(policy?.metadata.generation);

  await stack.resources.approve(plan.metadata.name!);
  await waitFor(
    'ApprovalIgnored=True/ObserveModeNeverExecutes',
    async () => {
      const p = await stack.resources.policy('watch');
      const ignored = condition(p?.status?.conditions, 'ApprovalIgnored');
      return ignored?.status === 'True' && ignored.reason === 'ObserveModeNeverExecutes';
    },
    { describe: () => stack.resources.policy('watch').then((p) => p?.status) },
  );
  // Give a wrongly released execution time to land before asserting it did not.
  await sleep(1500);
  expect(await roleExists(role)).toBe(false);
  const after = await stack.resources.plan(plan.metadata.name!);
  expect(after?.status?.phase).not.toBe('Applied');
});

test('plan mode waits for a person; a denial ends Rejected and nothing is executed', async () => {
  const role = stack.role('denied');
  await stack.resources.createPolicy('deny-me', {
    connection: db.connection,
    mode: 'plan',
    approval: 'manual',
    roles: [{ name: role, login: false }],
  });
  const plan = await pendingPlan('deny-me');
  expect(condition(plan.status?.conditions, 'Approved')).toMatchObject({ status: 'False' });
  expect(await roleExists(role)).toBe(false);

  await stack.resources.deny(plan.metadata.name!, { username: 'bob@example.com' });
  const rejected = await waitFor(
    'the denied plan to become Rejected',
    async () => {
      const p = await stack.resources.plan(plan.metadata.name!);
      return p?.status?.phase === 'Rejected' ? p : undefined;
    },
    { describe: () => stack.resources.plan(plan.metadata.name!).then((p) => p?.status) },
  );
  expect(rejected.status?.decidedBy?.username).toBe('bob@example.com');
  const policy = await waitFor('current_plan_ref cleared', async () => {
    const p = await stack.resources.policy('deny-me');
    return p?.status?.current_plan_ref ? undefined : p;
  });
  expect(policy.status?.current_plan_ref ?? null).toBeNull();
  await sleep(1000);
  expect(await roleExists(role)).toBe(false);
  // No new plan for the same effects in this cycle.
  expect(await stack.resources.plans('deny-me')).toHaveLength(1);
});

test('an edit with identical effects keeps the pending plan and advances revalidatedGeneration', async () => {
  const role = stack.role('kept');
  await stack.resources.createPolicy('keep-me', {
    connection: db.connection,
    mode: 'plan',
    approval: 'manual',
    interval: '5m',
    roles: [{ name: role, login: false }],
  });
  const plan = await pendingPlan('keep-me');
  // `interval` is part of the spec (generation 2) but not of the effects.
  const edited = await stack.resources.patchPolicySpec('keep-me', { interval: '10m' });
  expect(edited.metadata.generation).toBe(2);

  const revalidated = await waitFor(
    'revalidatedGeneration 2 on the same plan',
    async () => {
      const p = await stack.resources.plan(plan.metadata.name!);
      return p?.status?.revalidatedGeneration === 2 ? p : undefined;
    },
    { describe: () => stack.resources.plan(plan.metadata.name!).then((p) => p?.status) },
  );
  expect(revalidated.status?.phase).toBe('Pending');
  expect(revalidated.status?.changeDigest).toBe(plan.status?.changeDigest);
  expect(await stack.resources.plans('keep-me')).toHaveLength(1);
  const policy = await stack.resources.policy('keep-me');
  expect(policy?.status?.current_plan_ref?.name).toBe(plan.metadata.name);
});

test('plan mode: a person approves, the plan is applied and the policy converges', async () => {
  const role = stack.role('approved');
  await stack.resources.createPolicy('approve-me', {
    connection: db.connection,
    mode: 'plan',
    approval: 'manual',
    roles: [{ name: role, login: false }],
  });
  const plan = await pendingPlan('approve-me');
  expect(await roleExists(role)).toBe(false);

  await stack.resources.approve(plan.metadata.name!, { username: 'alice@example.com' });
  const applied = await waitFor(
    'the approved plan to become Applied',
    async () => {
      const p = await stack.resources.plan(plan.metadata.name!);
      return p?.status?.phase === 'Applied' ? p : undefined;
    },
    { timeoutMs: 25_000, describe: () => stack.resources.plan(plan.metadata.name!).then((p) => p?.status) },
  );
  expect(applied.status?.decidedBy?.username).toBe('alice@example.com');
  expect(await roleExists(role)).toBe(true);
  await waitFor(
    'Ready=True/Reconciled',
    async () => {
      const p = await stack.resources.policy('approve-me');
      return condition(p?.status?.conditions, 'Ready')?.reason === 'Reconciled';
    },
    { describe: () => stack.resources.policy('approve-me').then((p) => p?.status) },
  );
});
