// End to end, what `kubectl get -o wide` prints for the five kinds once each is healthy: a converged
// policy, its applied plan, a planned successor candidate, an accepted access policy and an active request.
import { KIND_NAMES, type Kind } from '@rolepolicy/kube';
import { CandidateResources } from './support/candidates.js';
import { EphemeralResources } from './support/ephemeral.js';
import { Kubectl } from './support/kubectl.js';
import { condition, startStack, waitFor, type Stack } from './stack.js';

let stack: Stack;
let kubectl: Kubectl;

beforeAll(async () => {
  stack = await startStack();
  kubectl = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
}, 60_000);

afterAll(async () => {
  kubectl?.dispose();
  await stack?.stop();
});

/** Rows of a kubectl table keyed by NAME, each cell cut at its header's column (tabwriter aligns them). */
function parseTable(output: string): Map<string, Record<string, string>> {
  const [header = '', ...lines] = output.split('\n').filter((line) => line.trim() !== '');
  const starts = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index }));
  const rows = new Map<string, Record<string, string>>();
  for (const line of lines) {
    const cells = Object.fromEntries(
      starts.map((column, i) => [column.name, line.slice(column.at, starts[i + 1]?.at).trim()]),
    );
    rows.set(cells['NAME'] ?? '', cells);
  }
  return rows;
}

/** The columns of `name` that print nothing (empty or `<none>`), after every column was printed. */
async function blankColumns(kind: Kind, name: string): Promise<Record<string, string>> {
  const row = parseTable(await kubectl.ok(['get', KIND_NAMES[kind].plural, '-o', 'wide'])).get(name);
  if (row === undefined) throw new Error(`kubectl get ${KIND_NAMES[kind].plural} does not list ${name}`);
  return Object.fromEntries(Object.entries(row).filter(([, cell]) => cell === '' || cell === '<none>'));
}

test('every printer column of the five kinds shows a value for a healthy object', async () => {
  const db = await stack.createDatabase('columns');
  const [reader, alice] = [stack.role('reader'), stack.role('alice')];
  const roles = [
    { name: reader, login: false },
    { name: alice, login: true },
  ];
  // PostgresPolicy and PostgresPolicyPlan: a manually approved plan, applied, and the policy converged.
  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles,
  });
  const plan = await waitFor('the policy plan', async () =>
    (await stack.resources.plans('orders')).find((p) => p.status?.phase === 'Pending'),
  );
  // PLAN names the plan in flight, then every other column of the policy is filled.
  await waitFor(
    'kubectl shows the policy plan in flight',
    async () =>
      parseTable(await kubectl.ok(['get', 'pgpolicy', 'orders', '-o', 'wide'])).get('orders')?.['PLAN'] ===
      plan.metadata.name,
  );
  expect(await blankColumns('PostgresPolicy', 'orders')).toEqual({});
  await stack.resources.approve(plan.metadata.name!);
  await stack.reconciled('orders');
  await waitFor(
    'the plan Applied',
    async () => (await stack.resources.plan(plan.metadata.name!))?.status?.phase === 'Applied',
  );

  // PostgresPolicyCandidate: a planned proposal that replaces an earlier one.
  const candidates = new CandidateResources(stack.kubeConfig, stack.namespace);
  const proposal = { roles: [...roles, { name: stack.role('extra'), login: false }] };
  await candidates.create('orders-v1', 'orders', proposal);
  await candidates.create('orders-v2', 'orders', proposal, { replaces: 'orders-v1' });
  await waitFor('candidate orders-v2 Planned', async () => {
    const c = await candidates.get('orders-v2');
    return c.status?.phase === 'Planned' && c.status.planRef != null;
  });

  // EphemeralAccessPolicy Accepted and EphemeralAccessRequest Active.
  const eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  await eph.create('EphemeralAccessPolicy', 'oncall', {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '30m',
    postgresPolicyRef: { name: 'orders' },
    memberships: [{ role: reader, inherit: true }],
  });
  await waitFor(
    'access policy oncall Accepted',
    async () =>
      condition((await eph.accessPolicy('oncall'))?.status?.conditions, 'Accepted')?.status === 'True',
  );
  await eph.create('EphemeralAccessRequest', 'alice-oncall', {
    accessPolicyRef: { name: 'oncall' },
    subject: { role: alice },
    requestedBy: { username: 'alice@example.com' },
    justification: 'incident 42',
  });
  await eph.phase('alice-oncall', 'Active');

  // A converged policy has no plan in flight: PLAN is its one blank cell, by design.
  expect({
    PostgresPolicy: await blankColumns('PostgresPolicy', 'orders'),
    PostgresPolicyPlan: await blankColumns('PostgresPolicyPlan', plan.metadata.name!),
    PostgresPolicyCandidate: await blankColumns('PostgresPolicyCandidate', 'orders-v2'),
    EphemeralAccessPolicy: await blankColumns('EphemeralAccessPolicy', 'oncall'),
    EphemeralAccessRequest: await blankColumns('EphemeralAccessRequest', 'alice-oncall'),
  }).toEqual({
    PostgresPolicy: { PLAN: '' },
    PostgresPolicyPlan: {},
    PostgresPolicyCandidate: {},
    EphemeralAccessPolicy: {},
    EphemeralAccessRequest: {},
  });
}, 120_000);
