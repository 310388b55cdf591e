// End to end, Kubernetes Events: the planner announces a plan's lifecycle (computed, approved, applied,
// failed) through the k8s-gateway, and `kubectl describe postgrespolicyplan` shows them as a person
// would see them on a cluster. Secrets never appear in them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlFor, type Kubectl } from '@rolepolicy/testing';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
let kubectl: Kubectl;
let cacheDir: string;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('events');
  cacheDir = await mkdtemp(join(tmpdir(), 'rp-events-kubectl-'));
  kubectl = kubectlFor(stack.emulator.kubeconfigPath, cacheDir);
}, 45_000);

afterAll(async () => {
  await stack?.stop();
  await rm(cacheDir, { recursive: true, force: true });
});

async function pendingPlan(policy: string): Promise<string> {
  const plan = await waitFor(
    `a Pending plan of ${policy}`,
    async () => (await stack.resources.plans(policy)).find((p) => p.status?.phase === 'Pending'),
    { timeoutMs: 40_000, describe: () => stack.resources.policy(policy).then((p) => p?.status) },
  );
  return plan.metadata.name!;
}

async function describedWith(plan: string, pattern: RegExp): Promise<string> {
  return waitFor(
    `kubectl describe ${plan} to show ${pattern}`,
    async () => {
      const out = await kubectl.ok('describe', 'postgrespolicyplan', plan, '-n', stack.namespace);
      return pattern.test(out) ? out : undefined;
    },
    { timeoutMs: 40_000 },
  );
}

test('kubectl describe shows a plan computed, approved and applied', async () => {
  const role = stack.role('events_applied');
  await stack.resources.createPolicy('evented', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: role, login: false }],
  });
  const plan = await pendingPlan('evented');
  await describedWith(plan, /Normal\s+PlanComputed\s/);
  await stack.resources.approve(plan);
  const described = await describedWith(plan, /Normal\s+PlanApplied\s/);

  expect(described).toMatch(/Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message/);
  expect(described).toMatch(
    /Normal\s+PlanComputed\s+\S+\s+rolepolicy-planner\s+computed for PostgresPolicy evented generation 1, digest sha256:\S+; awaiting approval/,
  );
  expect(described).toMatch(
    /Normal\s+PlanApproved\s+\S+\s+rolepolicy-planner\s+approval recorded; execution requested/,
  );
  expect(described).toMatch(
    /Normal\s+PlanApplied\s+\S+\s+rolepolicy-planner\s+applied 1 statements \(digest sha256:\S+\)/,
  );
  expect((await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length).toBe(1);
  // The same Events are listed with the reasons kubectl get events prints.
  const listed = await kubectl.ok(
    'get',
    'events',
    '-n',
    stack.namespace,
    '--field-selector',
    `involvedObject.name=${plan}`,
    '-o',
    'jsonpath={range .items[*]}{.reason} {.count} {.source.component} {.involvedObject.uid}{"\\n"}{end}',
  );
  const uid = (await stack.resources.plan(plan))!.metadata.uid!;
  expect(listed.trim().split('\n').sort()).toEqual([
    `PlanApplied 1 rolepolicy-planner ${uid}`,
    `PlanApproved 1 rolepolicy-planner ${uid}`,
    `PlanComputed 1 rolepolicy-planner ${uid}`,
  ]);
}, 120_000);

test('kubectl describe shows a Warning when an approved plan fails, without secrets', async () => {
  // An operator that may log in but not create roles: the approved CREATE ROLE fails in the database.
  const operator = stack.role('events_operator');
  await db.sql(`CREATE ROLE "${operator}" LOGIN NOCREATEROLE`);
  const url = new URL(db.url);
  url.username = operator;
  url.password = 'pw-never-in-events';
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: {
      metadata: { name: 'events-operator' },
      type: 'Opaque',
      stringData: { DATABASE_URL: url.toString() },
    },
  });
  await stack.resources.createPolicy('failing', {
    connection: { secretRef: { name: 'events-operator' } },
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('events_never'), login: false }],
  });
  const plan = await pendingPlan('failing');
  await stack.resources.approve(plan);
  const described = await describedWith(plan, /Warning\s+PlanFailed\s/);

  expect(described).toMatch(
    /Warning\s+PlanFailed\s+\S+\s+rolepolicy-planner\s+ExecutionFailed: .*\(SQLSTATE 42501\): permission denied to create role/,
  );
  expect(described).not.toContain('pw-never-in-events');
  const events = await kubectl.ok('get', 'events', '-n', stack.namespace, '-o', 'json');
  expect(events).not.toContain('pw-never-in-events');
  expect(events).not.toContain(url.toString());
}, 120_000);

/** The reasons of the Events about one object, as `kubectl get events --field-selector` lists them. */
async function reasonsAbout(kind: string, name: string): Promise<string[]> {
  const events = await stack.core.listNamespacedEvent({
    namespace: stack.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return events.items.filter((e) => e.involvedObject.kind === kind).map((e) => e.reason ?? '');
}

test('an auto policy: its first apply is one Event (PlanApplied); drift after convergence is DriftDetected', async () => {
  const role = stack.role('events_auto');
  await stack.resources.createPolicy('auto-evented', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    interval: '2s',
    roles: [{ name: role, login: false }],
  });
  await stack.reconciled('auto-evented');
  const [first] = await stack.resources.plans('auto-evented');
  await describedWith(first!.metadata.name!, /Normal\s+PlanApplied\s/);
  // The policy's own Events of that apply (sent before PlanApplied) repeat nothing: a policy never
  // reconciled had no drift, and its Ready=True is the plan's PlanApplied.
  expect(await reasonsAbout('PostgresPolicy', 'auto-evented')).toEqual([]);

  // Behind the converged policy's back: the next interval finds the drift, announces it, and repairs it.
  await db.sql(`ALTER ROLE "${role}" CREATEDB`);
  const reasons = await waitFor('DriftDetected on the policy', async () => {
    const seen = await reasonsAbout('PostgresPolicy', 'auto-evented');
    return seen.includes('DriftDetected') ? seen : undefined;
  });
  expect(reasons).toEqual(['DriftDetected']);
  await waitFor('the drift repaired', async () => {
    const [row] = await db.sql<{ rolcreatedb: boolean }>(
      'SELECT rolcreatedb FROM pg_roles WHERE rolname = $1',
      [role],
    );
    return row?.rolcreatedb === false ? true : undefined;
  });
}, 120_000);
