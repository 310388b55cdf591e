// End to end, password sources: a role whose password comes from a Secret gets it as a SCRAM verifier,
// and rotating the Secret (a new resourceVersion) sets the new password on the next pass, recorded in
// applied_password_source_versions; a generated password is stored once and survives reconciles unchanged.
import { generatedSecretName } from '@rolepolicy/kube';
import { scramSha256Verifier } from '@rolepolicy/policy';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('passwords');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

const policyStatus = (name: string) => () => stack.resources.policy(name).then((p) => p?.status);

/** True when the role's stored SCRAM verifier was computed from `password`. */
async function passwordMatches(role: string, password: string): Promise<boolean> {
  const [row] = await db.sql<{ rolpassword: string | null }>(
    'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
    [role],
  );
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(row?.rolpassword ?? '');
  if (!match) return false;
  return (
    scramSha256Verifier(password, Buffer.from(match[2]!, 'base64'), Number(match[1])) === row?.rolpassword
  );
}

async function reconciledWith(name: string, probe: () => Promise<boolean>, what: string) {
  return waitFor(
    `${name}: Reconciled and ${what}`,
    async () => {
      const p = await stack.resources.policy(name);
      const ready = condition(p?.status?.conditions, 'Ready');
      return ready?.reason === 'Reconciled' && (await probe()) ? p : undefined;
    },
    { timeoutMs: 30_000, describe: policyStatus(name) },
  );
}

test('a Secret-sourced password is set, and rotating the Secret sets the new one', async () => {
  const app = stack.role('rotating_app');
  const secretName = 'app-credentials';
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: { metadata: { name: secretName }, type: 'Opaque', stringData: { [app]: 'first-Password-0001' } },
  });
  await stack.resources.createPolicy('rotation', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: app, login: true, password: { secretRef: { name: secretName } } }],
  });
  const first = await reconciledWith(
    'rotation',
    () => passwordMatches(app, 'first-Password-0001'),
    'first password',
  );
  const firstVersion = first.status?.applied_password_source_versions?.[app];
  expect(firstVersion).toEqual(expect.any(String));

  await stack.core.replaceNamespacedSecret({
    namespace: stack.namespace,
    name: secretName,
    body: { metadata: { name: secretName }, type: 'Opaque', stringData: { [app]: 'second-Password-0002' } },
  });
  // An apply that commits within a second is shown by its outcome alone (docs/planner.md §3): until that
  // status lands the policy still reads as the previous convergence, so wait for the one recording the rotation.
  const rotated = await waitFor(
    'rotation: Reconciled at the rotated Secret version, and the rotated password',
    async () => {
      const p = await stack.resources.policy('rotation');
      const ready = condition(p?.status?.conditions, 'Ready');
      const recorded = p?.status?.applied_password_source_versions?.[app] !== firstVersion;
      return ready?.reason === 'Reconciled' &&
        recorded &&
        (await passwordMatches(app, 'second-Password-0002'))
        ? p
        : undefined;
    },
    { timeoutMs: 30_000, describe: policyStatus('rotation') },
  );
  expect(rotated.status?.applied_password_source_versions?.[app]).not.toBe(firstVersion);
  expect(await passwordMatches(app, 'first-Password-0001')).toBe(false);

  // Exactly two plans set a password, and neither they nor the policy status show one.
  const plans = await stack.resources.plans('rotation');
  const setting = plans.filter(
    (p) => p.status?.phase === 'Applied' && (p.status.changeSummary?.passwords_set ?? 0) > 0,
  );
  expect(setting).toHaveLength(2);
  const everything = JSON.stringify([rotated, plans]);
  expect(everything).not.toContain('first-Password-0001');
  expect(everything).not.toContain('second-Password-0002');
  expect(everything).not.toMatch(/SCRAM-SHA-256\$/);
}, 75_000);

test('a generated password is created once and kept across reconciles', async () => {
  const svc = stack.role('generated_svc');
  await stack.resources.createPolicy('generated', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: svc, login: true, password: { generate: {} } }],
  });
  const secretName = generatedSecretName('generated', svc);
  const readPassword = async (): Promise<string> => {
    const secret = await stack.core.readNamespacedSecret({ namespace: stack.namespace, name: secretName });
    return Buffer.from(secret.data?.['password'] ?? '', 'base64').toString('utf8');
  };
  await reconciledWith(
    'generated',
    async () => passwordMatches(svc, await readPassword().catch(() => '')),
    'the generated password',
  );
  const password = await readPassword();
  expect(password).toHaveLength(32); // the spec's default length

  const value = await stack.resources.requestReconcile('generated');
  await waitFor(
    'the forced reconcile',
    async () => (await stack.resources.policy('generated'))?.status?.lastHandledReconcileAt === value,
    { describe: policyStatus('generated') },
  );
  expect(await readPassword()).toBe(password);
  expect(await passwordMatches(svc, password)).toBe(true);
  const setting = (await stack.resources.plans('generated')).filter(
    (p) => (p.status?.changeSummary?.passwords_set ?? 0) > 0,
  );
  expect(setting).toHaveLength(1);
}, 60_000);

test('a generated password Secret is created only when an approved plan runs; a denied plan leaves none', async () => {
  const secretOf = async (name: string) =>
    stack.core.readNamespacedSecret({ namespace: stack.namespace, name }).catch(() => undefined);
  const pendingPlan = (policy: string) =>
    waitFor(`${policy}: a Pending plan`, async () =>
      (await stack.resources.plans(policy)).find((p) => p.status?.phase === 'Pending'),
    );

  // Denied: the plan is Rejected and nothing was ever created.
  const denied = stack.role('denied_gen');
  await stack.resources.createPolicy('gen-denied', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: denied, login: true, password: { generate: {} } }],
  });
  const deniedPlan = await pendingPlan('gen-denied');
  expect(await secretOf(generatedSecretName('gen-denied', denied))).toBeUndefined();
  await stack.resources.deny(deniedPlan.metadata.name!);
  await waitFor('the denied plan Rejected', async () =>
    (await stack.resources.plan(deniedPlan.metadata.name!))?.status?.phase === 'Rejected' ? true : undefined,
  );
  expect(await secretOf(generatedSecretName('gen-denied', denied))).toBeUndefined();
  expect((await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [denied])).length).toBe(0);

  // Approved: the executor creates the Secret under its lock and sets exactly that password, once.
  const approved = stack.role('approved_gen');
  const secretName = generatedSecretName('gen-approved', approved);
  await stack.resources.createPolicy('gen-approved', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: approved, login: true, password: { generate: { length: 24 } } }],
  });
  const plan = await pendingPlan('gen-approved');
  expect(plan.status?.sqlInline).toContain("PASSWORD '[REDACTED]'");
  expect(await secretOf(secretName)).toBeUndefined();
  await stack.resources.approve(plan.metadata.name!);
  const secret = await waitFor('the generated Secret', () => secretOf(secretName));
  const password = Buffer.from(secret.data?.['password'] ?? '', 'base64').toString('utf8');
  expect(password).toHaveLength(24);
  const policy = await reconciledWith(
    'gen-approved',
    () => passwordMatches(approved, password),
    'the generated password',
  );
  expect(policy.status?.applied_password_source_versions?.[approved]).toBe(
    `${secretName}:password:${secret.metadata?.resourceVersion}`,
  );
  // Converged: a forced reconcile makes no new plan and keeps the Secret.
  const value = await stack.resources.requestReconcile('gen-approved');
  await waitFor('the forced reconcile', async () =>
    (await stack.resources.policy('gen-approved'))?.status?.lastHandledReconcileAt === value
      ? true
      : undefined,
  );
  expect(await stack.resources.plans('gen-approved')).toHaveLength(1);
  expect((await secretOf(secretName))?.metadata?.resourceVersion).toBe(secret.metadata?.resourceVersion);
}, 90_000);

test('an empty password value is a clear error on the policy, never a silent set or skip', async () => {
  const app = stack.role('empty_pw');
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: { metadata: { name: 'empty-pw' }, stringData: { [app]: '' } },
  });
  await stack.resources.createPolicy('empty-pw', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: app, login: true, password: { secretRef: { name: 'empty-pw' } } }],
  });
  const ready = await waitFor('Ready=False naming the Secret and key', async () => {
    const c = condition((await stack.resources.policy('empty-pw'))?.status?.conditions, 'Ready');
    return c?.status === 'False' && c.reason === 'InvalidSpec' ? c : undefined;
  });
  expect(ready.message).toContain(
    `Secret "${stack.namespace}/empty-pw" key "${app}" for role "${app}": password is empty`,
  );
  expect(await stack.resources.plans('empty-pw')).toEqual([]);
}, 60_000);
