// Approvals as a control (issue 26, ADR 0026, docs/approvals.md), end to end against an API that enforces what
// a cluster would (authentication, RBAC, ValidatingAdmissionPolicies) with deploy/admission installed, and
// people as kubectl with their own kubeconfigs: carol may patch plan status but holds no `approve`; bob is
// an approver (group dba); alice requests access and is an approver too. A user without `approve` cannot
// approve, a forged decidedBy is refused, a requester cannot decide their own request, an approver's
// decision records their identity, the controller's own writes pass; with the policy left out, the
// controller reports decisions as unauthenticated.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlFor, type Kubectl } from '@rolepolicy/testing';
import { REPO_ROOT } from '../tools/deploy/render.js';
import { EphemeralResources } from './support/ephemeral.js';
import { KubectlPlugin, peopleKubeconfig } from './support/kubectl-plugin.js';
import { PGPLAN } from './support/peer.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const NS = 'approvals';
const admission = (file: string) => join(REPO_ROOT, 'deploy/admission', file);

let stack: Stack;
let db: TargetDatabase;
let dir: string;
let admin: Kubectl;
let bob: Kubectl;
let carol: Kubectl;
let alice: Kubectl;
let plugin: KubectlPlugin;

type Identity = { username: string; uid: string; groups: string[] };

/** Who kubectl says the caller is (`kubectl auth whoami -o json`), as decidedBy must carry it. */
async function whoami(k: Kubectl): Promise<Identity> {
  const review = JSON.parse(await k.ok('auth', 'whoami', '-o', 'json')) as {
    status: { userInfo: { username: string; uid?: string; groups?: string[] } };
  };
  const { username, uid, groups } = review.status.userInfo;
  return { username, uid: uid ?? '', groups: groups ?? [] };
}

async function apply(k: Kubectl, name: string, manifest: object): Promise<{ code: number; stderr: string }> {
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(manifest));
  return k.run('create', '-n', NS, '-f', file);
}

/** A person's decision on a plan: the pending Approved replaced by the decision, decidedBy beside it. */
async function decidePlan(k: Kubectl, plan: string, type: 'Approved' | 'Denied', decidedBy: object) {
  const current = JSON.parse(await admin.ok('get', PGPLAN, plan, '-n', NS, '-o', 'json')) as {
    status: { conditions: { type: string }[] };
  };
  const conditions = current.status.conditions.filter((c) => c.type !== 'Approved' && c.type !== 'Denied');
  const at = new Date().toISOString();
  const decision = {
    type,
    status: 'True',
    reason: `${type}ByReviewer`,
    message: 'OPS-1',
    last_transition_time: at,
  };
  conditions.push(decision);
  const patch = JSON.stringify({ status: { conditions, decidedBy } });
  return k.run('patch', PGPLAN, plan, '-n', NS, '--subresource=status', '--type=merge', '-p', patch);
}

/** A person's decision on an access request: appended, as docs/ephemeral-access.md shows. */
function decideRequest(k: Kubectl, request: string, type: 'Approved' | 'Denied', decidedBy: object) {
  const patch = JSON.stringify([
    { op: 'add', path: '/status/conditions/-', value: { type, status: 'True', reason: type } },
    { op: 'add', path: '/status/decidedBy', value: decidedBy },
  ]);
  return k.run(
    'patch',
    'ephemeralaccessrequest',
    request,
    '-n',
    NS,
    '--subresource=status',
    '--type=json',
    '-p',
    patch,
  );
}

async function pendingPlanOf(policy: string, reason: string) {
  return waitFor(
    `a Pending plan of ${policy} with Approved=False/${reason}`,
    async () => {
      const ref = (await stack.resources.policy(policy))?.status?.current_plan_ref?.name;
      const p = ref ? await stack.resources.plan(ref) : undefined;
      const approved = p?.status?.conditions?.find((c) => c.type === 'Approved');
      return p?.status?.phase === 'Pending' && approved?.reason === reason ? p : undefined;
    },
    { timeoutMs: 60_000, describe: () => stack.resources.policy(policy).then((p) => p?.status) },
  );
}

/** The planner's `rp_decisions_unauthenticated` (1 or 0), from its /metrics. */
async function plannerUnauthenticated(): Promise<number | undefined> {
  const planner = stack.services.find((s) => s.name === 'planner')!;
  const text = await (await fetch(`${planner.url}/metrics`)).text();
  const line = /^rp_decisions_unauthenticated(?:\{[^}]*\})? (\d+)$/m.exec(text);
  return line ? Number(line[1]) : undefined;
}

beforeAll(async () => {
  stack = await startStack({
    namespace: NS,
    apiAccessControl: true,
    admissionFiles: [admission('decisions.yaml'), admission('roles.yaml')],
  });
  db = await stack.createDatabase('approvals');
  await stack.waitReady();
  dir = await mkdtemp(join(tmpdir(), 'rp-approvals-'));
  const emu = stack.emulator;
  admin = kubectlFor(emu.kubeconfigPath, dir);
  bob = kubectlFor(await emu.kubeconfigFor({ username: 'bob', groups: ['dba'] }, NS), dir);
  carol = kubectlFor(await emu.kubeconfigFor({ username: 'carol', groups: ['ops'] }, NS), dir);
  alice = kubectlFor(await emu.kubeconfigFor({ username: 'alice', groups: ['dev', 'dba'] }, NS), dir);
  await admin.ok(
    'create',
    'rolebinding',
    'approvers',
    '-n',
    NS,
    '--clusterrole=rolepolicy-approver',
    '--group=dba',
  );
  await admin.ok(
    'create',
    'rolebinding',
    'requesters',
    '-n',
    NS,
    '--clusterrole=rolepolicy-requester',
    '--group=dev',
  );
  // carol may write plan status (a namespace admin could) but holds no `approve`.
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'status-writer', namespace: NS },
    rules: [
      { apiGroups: ['rolepolicy.io'], resources: ['postgrespolicyplans'], verbs: ['get', 'list'] },
      { apiGroups: ['rolepolicy.io'], resources: ['postgrespolicyplans/status'], verbs: ['get', 'patch'] },
    ],
  };
  expect((await apply(admin, 'status-writer', role)).code).toBe(0);
  await admin.ok('create', 'rolebinding', 'status-writers', '-n', NS, '--role=status-writer', '--group=ops');
  // `kubectl rolepolicy` (docs/cli.md) as bob and carol: it writes the identity SelfSubjectReview answers.
  const person = (username: string, groups: string[]) => ({
    context: username,
    username,
    token: emu.tokenFor({ username, groups }),
  });
  plugin = new KubectlPlugin(
    peopleKubeconfig(emu.url, NS, [person('bob', ['dba']), person('carol', ['ops'])], emu.caPem),
  );
}, 120_000);

afterAll(async () => {
  plugin?.dispose();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 180_000);

test('a plan: no approve, no decision; a forged decidedBy is refused; an approver’s decision is theirs', async () => {
  const role = stack.role('manual');
  await stack.resources.createPolicy('manual', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: role, login: false }],
  });
  // The gateway reads the bound policy: decisions are authenticated, the plan waits as usual.
  const plan = (await pendingPlanOf('manual', 'PendingApproval')).metadata.name!;
  expect(await plannerUnauthenticated()).toBe(0);

  const noApprove = await decidePlan(carol, plan, 'Approved', await whoami(carol));
  expect(noApprove.code).toBe(1);
  expect(noApprove.stderr).toContain(
    `recording a decision needs the verb approve on postgrespolicyplans ${plan} in namespace ${NS}`,
  );

  const bobIs = await whoami(bob);
  const forged = await decidePlan(bob, plan, 'Approved', { ...bobIs, username: 'carol' });
  expect(forged.code).toBe(1);
  expect(forged.stderr).toContain('decidedBy must be the authenticated caller: username bob');

  expect((await decidePlan(bob, plan, 'Approved', bobIs)).code).toBe(0);
  // The controller's own writes (phases, the executor's result) still pass.
  const applied = await waitFor('the approved plan Applied', async () => {
    const p = await stack.resources.plan(plan);
    return p?.status?.phase === 'Applied' ? p : undefined;
  });
  expect(applied.status?.decidedBy).toEqual(bobIs);
  expect((await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length).toBe(1);
});

test('kubectl rolepolicy approve passes as the approver the API authenticates, not without approve', async () => {
  await stack.resources.createPolicy('plugin', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('plugin'), login: false }],
  });
  const plan = (await pendingPlanOf('plugin', 'PendingApproval')).metadata.name!;
  const refused = await plugin.run(['approve', plan, '--context', 'carol']);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('recording a decision needs the verb approve');
  await plugin.ok(['approve', plan, '--wait', '--timeout', '60s', '--context', 'bob']);
  // The plugin leaves an empty uid out; username and groups are the API's.
  const { username, groups } = await whoami(bob);
  expect((await stack.resources.plan(plan))?.status?.decidedBy).toEqual({ username, groups });
});

test('the controller’s auto-approval passes: an automatic policy reconciles', async () => {
  const role = stack.role('auto');
  await stack.resources.createPolicy('auto', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: role, login: false }],
  });
  await stack.reconciled('auto', 60_000);
  expect((await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length).toBe(1);
});

test('the gateway’s ConfigMap policy knows the gateway through the same parameter (ADR 0022)', async () => {
  const asGateway = '--as=system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway';
  const refused = await admin.run('create', 'configmap', 'not-a-plans', '-n', NS, asGateway);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(
    'the k8s-gateway writes only ConfigMaps named <plan>-sql or <plan>-review',
  );
});

test('an access request is asked in its creator’s name and not decided by its requester', async () => {
  const request = (name: string, requestedBy: object) => ({
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: { name, namespace: NS },
    spec: { accessPolicyRef: { name: 'read' }, subject: { role: stack.role('alice') }, requestedBy },
  });
  const aliceIs = await whoami(alice);
  const forged = await apply(alice, 'forged', request('forged', { username: 'mallory' }));
  expect(forged.code).toBe(1);
  expect(forged.stderr).toContain('spec.requestedBy must be the authenticated caller: username alice');
  expect((await apply(alice, 'mine', request('mine', aliceIs))).code).toBe(0);
  await waitFor('the scheduler’s status on the request', async () => {
    const out = await admin.ok(
      'get',
      'ephemeralaccessrequest',
      'mine',
      '-n',
      NS,
      '-o',
      'jsonpath={.status.conditions}',
    );
    return out.length > 2;
  });

  const own = await decideRequest(alice, 'mine', 'Approved', aliceIs);
  expect(own.code).toBe(1);
  expect(own.stderr).toContain('an access request cannot be decided by its requester (separation of duties)');

  const bobIs = await whoami(bob);
  expect((await decideRequest(bob, 'mine', 'Denied', bobIs)).code).toBe(0);
  const decidedBy = await admin.ok(
    'get',
    'ephemeralaccessrequest',
    'mine',
    '-n',
    NS,
    '-o',
    'jsonpath={.status.decidedBy.username}',
  );
  expect(decidedBy).toBe('bob');
});

test('with the policy left out, the controller reports decisions as unauthenticated', async () => {
  // A Required request waiting for a decision while the policy is bound: Ready's reason is its phase.
  const [writer, subject] = [stack.role('writer'), stack.role('subject')];
  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: writer, login: false },
      { name: subject, login: true },
    ],
  });
  await stack.reconciled('orders', 60_000);
  const eph = new EphemeralResources(stack.kubeConfig, NS);
  await eph.create('EphemeralAccessPolicy', 'writers', {
    approval: { mode: 'Required' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '1h',
    memberships: [{ role: writer, inherit: true }],
    postgresPolicyRef: { name: 'orders' },
  });
  const request = {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: { name: 'write-now', namespace: NS },
    spec: {
      accessPolicyRef: { name: 'writers' },
      subject: { role: subject },
      requestedBy: await whoami(alice),
    },
  };
  expect((await apply(alice, 'write-now', request)).code).toBe(0);
  const ready = async () =>
    (await eph.request('write-now'))?.status?.conditions?.find((c) => c.type === 'Ready')?.reason;
  await eph.phase('write-now', 'PendingApproval', 60_000);
  await waitFor('Ready=PendingApproval', async () =>
    (await ready()) === 'PendingApproval' ? true : undefined,
  );

  await admin.ok('delete', 'validatingadmissionpolicybinding', 'rolepolicy-decisions');
  // The waiting request says so at once (the scheduler re-runs every request when the state flips).
  await waitFor('Ready=ApprovalUnauthenticated on the waiting request', async () =>
    (await ready()) === 'ApprovalUnauthenticated' ? true : undefined,
  );
  await waitFor('the planner to report decisions unauthenticated', async () =>
    (await plannerUnauthenticated()) === 1 ? true : undefined,
  );
  await stack.resources.createPolicy('unguarded', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('unguarded'), login: false }],
  });
  const plan = await pendingPlanOf('unguarded', 'ApprovalUnauthenticated');
  expect(plan.status?.conditions?.find((c) => c.type === 'Approved')?.message).toMatch(
    /decisions are unauthenticated/,
  );
  // What the reason warns about: any status writer now decides under any name.
  expect((await decidePlan(carol, plan.metadata.name!, 'Denied', { username: 'somebody-else' })).code).toBe(
    0,
  );
});
