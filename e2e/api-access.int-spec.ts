// The whole product against an API that enforces what a cluster would (authentication, RBAC from
// deploy/base/rbac.yaml, the ValidatingAdmissionPolicy of deploy/base/admission.yaml): the k8s-gateway,
// talking as its own ServiceAccount, carries a manual plan through approval to Applied and an automatic
// one to Reconciled (status writes, plans, review ConfigMaps, Events, Secrets, its Lease), while a user
// without a binding is refused.
import { apiFailure } from '@rolepolicy/testing';
import { PolicyResources } from './support/resources.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack({ namespace: 'access', apiAccessControl: true });
  db = await stack.createDatabase('access');
  await stack.waitReady();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

test('the emulator authenticates and authorizes: the services run as their ServiceAccounts', async () => {
  expect(stack.emulator.authenticationEnabled).toBe(true);
  const mallory = new PolicyResources(stack.emulator.kubeConfigFor('mallory'), stack.namespace);
  const refused = await apiFailure(mallory.policy('anything'));
  expect(refused.code).toBe(403);
  expect(refused.body.message).toBe(
    'postgrespolicies.rolepolicy.io "anything" is forbidden: User "mallory" cannot get resource "postgrespolicies" in API group "rolepolicy.io" in the namespace "access"',
  );
});

test('a manual plan is approved and applied, an automatic policy reconciles, within the deployed RBAC', async () => {
  const manual = stack.role('manual');
  await stack.resources.createPolicy('manual', {
    connection: db.connection,
    mode: 'plan',
    approval: 'manual',
    roles: [{ name: manual, login: false }],
  });
  const plan = await waitFor(
    'a Pending plan of manual',
    async () => {
      const ref = (await stack.resources.policy('manual'))?.status?.current_plan_ref?.name;
      const p = ref ? await stack.resources.plan(ref) : undefined;
      return p?.status?.phase === 'Pending' ? p : undefined;
    },
    { timeoutMs: 30_000, describe: () => stack.resources.policy('manual').then((p) => p?.status) },
  );
  await stack.resources.approve(plan.metadata.name!);
  await waitFor('the approved plan to be Applied', async () => {
    const p = await stack.resources.plan(plan.metadata.name!);
    return p?.status?.phase === 'Applied';
  });
  expect(await roleExists(manual)).toBe(true);

  const auto = stack.role('auto');
  await stack.resources.createPolicy('auto', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: auto, login: false }],
  });
  await stack.reconciled('auto');
  expect(await roleExists(auto)).toBe(true);
});
