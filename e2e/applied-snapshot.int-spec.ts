// End to end, ADR 0017: the pass after an Applied result verifies convergence from the executor's post-apply
// snapshot (read on the session that held the lock) instead of asking the inspector for a new session. The
// fingerprint sent with it is the one the inspector computes for the same state, so the next pass is
// fingerprint-only; drift after the apply is still found and repaired.
import type { PostgresPolicyStatus } from '@rolepolicy/plan-lifecycle';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { metricSums } from './support/metrics.js';
import { recordResourceEvents } from './support/stream.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('applied');
  await db.sql('CREATE SCHEMA sales; CREATE TABLE sales.orders (id int)');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

const url = (service: string): string => stack.services.find((s) => s.name === service)!.url;
const inspections = () => metricSums(url('inspector'), 'rp_inspect_requests_total', 'outcome');
const verifications = async () =>
  (await metricSums(url('planner'), 'rp_planner_applied_snapshot_verifications_total')).total ?? 0;

test('one inspection per applied policy; the post-apply fingerprint holds for the next pass; drift is repaired', async () => {
  const reader = stack.role('sales_reader');
  await stack.resources.createPolicy('sales', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: reader, login: false }],
    grants: [
      { role: reader, object: { type: 'schema', name: 'sales' }, privileges: ['USAGE'] },
      { role: reader, object: { type: 'table', schema: 'sales', name: '*' }, privileges: ['SELECT'] },
    ],
  });
  await stack.reconciled('sales');
  // The Applied plan wakes the policy once more: that pass checks the result against the catalog, and
  // reads it from the executor's post-apply snapshot.
  await waitFor('the pass after the apply', async () => (await verifications()) === 1, { timeoutMs: 20_000 });
  // The planning inspection only.
  expect(await inspections()).toEqual({ inline: 1 });

  // The next pass asks for the fingerprint the executor sent, and the inspector finds it unchanged.
  await stack.resources.requestReconcile('sales');
  await waitFor('a fingerprint-only pass', async () => ((await inspections())['unchanged'] ?? 0) === 1, {
    timeoutMs: 20_000,
  });

  // Drift after the apply changes the fingerprint: the next pass reads in full and repairs it.
  await db.sql(`REVOKE SELECT ON sales.orders FROM "${reader}"`);
  await stack.resources.requestReconcile('sales');
  await waitFor(
    'the revoke repaired',
    async () => {
      const [row] = await db.sql<{ ok: boolean }>(
        `SELECT has_table_privilege($1, 'sales.orders', 'SELECT') AS ok`,
        [reader],
      );
      return row?.ok === true;
    },
    { timeoutMs: 30_000 },
  );
  // The repair's check came from its own post-apply snapshot too.
  await waitFor('the pass after the repair', async () => (await verifications()) === 2, {
    timeoutMs: 20_000,
  });
}, 90_000);

test('the pass verifying an apply writes nothing: the status the Applied result wrote stays, times included', async () => {
  const recorder = await recordResourceEvents(stack.nats.url, 'postgrespolicy', stack.namespace, 'verified');
  const before = await verifications();
  await stack.resources.createPolicy('verified', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: stack.role('verified_reader'), login: false }],
  });
  const reconciled = await stack.reconciled('verified');
  await waitFor('the pass after the apply', async () => (await verifications()) === before + 1, {
    timeoutMs: 20_000,
  });
  // A forced pass writes after it (its status carries the request): the gateway writes a policy's statuses
  // in order, so every status the verifying pass wrote is published before this one.
  const value = await stack.resources.requestReconcile('verified');
  await waitFor('the forced reconcile', async () =>
    recorder.events().some((e) => statusOf(e.object).lastHandledReconcileAt === value) ? true : undefined,
  );
  await recorder.stop();
  const settled = recorder
    .events()
    .map((e) => statusOf(e.object))
    .filter((s) => s.lastHandledReconcileAt !== value && condition(s.conditions, 'Ready')?.status === 'True')
    .map((s) => JSON.stringify(s));
  // One converged status before the forced pass: the Applied result's (the verifying pass found it right).
  expect(new Set(settled).size).toBe(1);
  const seen = JSON.parse(settled[0]!) as PostgresPolicyStatus;
  expect(seen).toEqual(reconciled.status);
  expect(condition(seen.conditions, 'Ready')?.message).toBe(
    `approved plan ${seen.current_plan_ref?.name} applied`,
  );
}, 60_000);

function statusOf(object: unknown): PostgresPolicyStatus {
  return (object as { status?: PostgresPolicyStatus }).status ?? {};
}
