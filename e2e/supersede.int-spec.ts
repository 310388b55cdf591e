// End to end, the approval identity is the plan's effects: an approved plan whose policy is edited to
// different effects before it runs is Superseded and its SQL never executes; suspend stops everything,
// and the force-reconcile annotation is recorded in lastHandledReconcileAt.
import { condition, sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('supersede');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

const policyStatus = (name: string) => () => stack.resources.policy(name).then((p) => p?.status);

test('suspend: Paused=True/Suspended, nothing is planned or executed', async () => {
  const role = stack.role('paused');
  await stack.resources.createPolicy('paused', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    suspend: true,
    roles: [{ name: role, login: false }],
  });
  const policy = await waitFor(
    'Paused=True/Suspended',
    async () => {
      const p = await stack.resources.policy('paused');
      return condition(p?.status?.conditions, 'Paused')?.reason === 'Suspended' ? p : undefined;
    },
    { describe: policyStatus('paused') },
  );
  expect(condition(policy.status?.conditions, 'Ready')).toMatchObject({
    status: 'False',
    reason: 'Suspended',
  });
  await sleep(1000);
  expect(await stack.resources.plans('paused')).toHaveLength(0);
  expect(await roleExists(role)).toBe(false);
});

test('an approved plan is Superseded by an edit with different effects and its SQL never runs', async () => {
  const first = stack.role('first');
  const second = stack.role('second');
  await stack.resources.createPolicy('moving', {
    connection: db.connection,
    mode: 'plan',
    approval: 'manual',
    roles: [{ name: first, login: false }],
  });
  const plan = await waitFor(
    'a Pending plan',
    async () => (await stack.resources.plans('moving')).find((p) => p.status?.phase === 'Pending'),
    { describe: policyStatus('moving') },
  );
  // Suspended, the approval cannot be acted on before the edit lands (no race with the executor).
  await stack.resources.patchPolicySpec('moving', { suspend: true });
  await waitFor('Paused=True', async () => {
    const p = await stack.resources.policy('moving');
    return condition(p?.status?.conditions, 'Paused')?.status === 'True';
  });
  await stack.resources.approve(plan.metadata.name!);
  await stack.resources.patchPolicySpec('moving', {
    suspend: false,
    roles: [{ name: second, login: false }],
  });

  const superseded = await waitFor(
    'the approved plan to be Superseded',
    async () => {
      const p = await stack.resources.plan(plan.metadata.name!);
      return p?.status?.phase === 'Superseded' ? p : undefined;
    },
    { describe: () => stack.resources.plan(plan.metadata.name!).then((p) => p?.status) },
  );
  // A recorded decision is never rewritten: superseding writes only the phase.
  expect(condition(superseded.status?.conditions, 'Approved')?.status).toBe('True');
  const replacement = await waitFor(
    'a new Pending plan for the new effects',
    async () =>
      (await stack.resources.plans('moving')).find(
        (p) => p.status?.phase === 'Pending' && p.metadata.name !== plan.metadata.name,
      ),
    { describe: policyStatus('moving') },
  );
  expect(replacement.status?.changeDigest).not.toBe(plan.status?.changeDigest);
  expect(replacement.status?.sqlInline).toContain(second);
  await sleep(1000);
  expect(await roleExists(first)).toBe(false);
  expect(await roleExists(second)).toBe(false);
});

test('the force-reconcile annotation is handled and recorded in lastHandledReconcileAt', async () => {
  await stack.resources.createPolicy('forced', {
    connection: db.connection,
    mode: 'observe',
    approval: 'manual',
    roles: [{ name: stack.role('forced'), login: false }],
  });
  await waitFor(
    'the first reconcile',
    async () => (await stack.resources.policy('forced'))?.status?.observed_generation === 1,
    { describe: policyStatus('forced') },
  );
  const value = await stack.resources.requestReconcile('forced', '2026-01-01T00:00:00Z');
  const policy = await waitFor(
    `lastHandledReconcileAt = ${value}`,
    async () => {
      const p = await stack.resources.policy('forced');
      return p?.status?.lastHandledReconcileAt === value ? p : undefined;
    },
    { describe: policyStatus('forced') },
  );
  expect(policy.metadata.generation).toBe(1);
});
