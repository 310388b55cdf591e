// The optional mutating half of the reference admission layer (deploy/admission/mutating, ADR 0026,
// docs/approvals.md), end to end against the enforcing API: a person decides or asks without typing their
// identity, and the API fills decidedBy and requestedBy from the authenticated caller, even over a forged
// one. The validating policy still runs after it: approve is still needed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlFor, type Kubectl } from '@rolepolicy/testing';
import { REPO_ROOT } from '../tools/deploy/render.js';
import { PGPLAN } from './support/peer.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const NS = 'approvals-filled';
const admission = (file: string) => join(REPO_ROOT, 'deploy/admission', file);

let stack: Stack;
let db: TargetDatabase;
let dir: string;
let admin: Kubectl;
let bob: Kubectl;
let carol: Kubectl;

type Identity = { username: string; uid?: string; groups: string[] };

async function whoami(k: Kubectl): Promise<Identity> {
  const review = JSON.parse(await k.ok('auth', 'whoami', '-o', 'json')) as {
    status: { userInfo: { username: string; uid?: string; groups?: string[] } };
  };
  const { username, uid, groups } = review.status.userInfo;
  return { username, ...(uid ? { uid } : {}), groups: groups ?? [] };
}

/** A decision as a person types it with the mutating policy installed: the condition only, or a forged name. */
function approve(k: Kubectl, plan: string, conditions: object[], decidedBy?: object) {
  const patch = JSON.stringify({ status: { conditions, ...(decidedBy ? { decidedBy } : {}) } });
  return k.run('patch', PGPLAN, plan, '-n', NS, '--subresource=status', '--type=merge', '-p', patch);
}

async function pendingPlan(policy: string): Promise<{ name: string; conditions: { type: string }[] }> {
  return waitFor(
    `a Pending plan of ${policy}`,
    async () => {
      const ref = (await stack.resources.policy(policy))?.status?.current_plan_ref?.name;
      const p = ref ? await stack.resources.plan(ref) : undefined;
      return p?.status?.phase === 'Pending'
        ? { name: p.metadata.name!, conditions: (p.status.conditions ?? []) as { type: string }[] }
        : undefined;
    },
    {
      timeoutMs: 60_000,
      describe: async () => {
        const pol = await stack.resources.policy(policy);
        const ref = pol?.status?.current_plan_ref?.name;
        return { policy: pol?.status, plan: ref ? (await stack.resources.plan(ref))?.status : undefined };
      },
    },
  );
}

/** The plan's conditions with the pending Approved replaced by a person's approval. */
const approvedConditions = (conditions: { type: string }[]) => [
  ...conditions.filter((c) => c.type !== 'Approved' && c.type !== 'Denied'),
  {
    type: 'Approved',
    status: 'True',
    reason: 'ApprovedByReviewer',
    message: 'OPS-2',
    last_transition_time: new Date().toISOString(),
  },
];

beforeAll(async () => {
  stack = await startStack({
    namespace: NS,
    apiAccessControl: true,
    admissionFiles: [
      admission('decisions.yaml'),
      admission('roles.yaml'),
      admission('mutating/identities.yaml'),
    ],
  });
  db = await stack.createDatabase('filled');
  await stack.waitReady();
  dir = await mkdtemp(join(tmpdir(), 'rp-approvals-filled-'));
  const emu = stack.emulator;
  admin = kubectlFor(emu.kubeconfigPath, dir);
  bob = kubectlFor(await emu.kubeconfigFor({ username: 'bob', groups: ['dba'] }, NS), dir);
  carol = kubectlFor(await emu.kubeconfigFor({ username: 'carol', groups: ['dev'] }, NS), dir);
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
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 180_000);

test('an approval without decidedBy, or with a forged one, records the approver the API authenticated', async () => {
  const role = stack.role('filled');
  await stack.resources.createPolicy('filled', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: role, login: false }],
  });
  const plan = await pendingPlan('filled');
  // A forged name is overwritten, not refused: the identity is the caller's whatever was typed.
  const written = await approve(bob, plan.name, approvedConditions(plan.conditions), { username: 'carol' });
  expect(written).toMatchObject({ code: 0 });
  const applied = await waitFor('the approved plan Applied', async () => {
    const p = await stack.resources.plan(plan.name);
    return p?.status?.phase === 'Applied' ? p : undefined;
  });
  expect(applied.status?.decidedBy).toMatchObject(await whoami(bob));
  expect((await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length).toBe(1);
});

test('filling the identity grants nothing: a caller without approve is still refused', async () => {
  await stack.resources.createPolicy('guarded', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('guarded'), login: false }],
  });
  const plan = await pendingPlan('guarded');
  const refused = await approve(carol, plan.name, approvedConditions(plan.conditions));
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/forbidden|approve/);
});

test('a request created in someone else’s name is recorded in its creator’s', async () => {
  const file = join(dir, 'request.json');
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'EphemeralAccessRequest',
      metadata: { name: 'mine', namespace: NS },
      spec: {
        accessPolicyRef: { name: 'read' },
        subject: { role: stack.role('carol') },
        requestedBy: { username: 'mallory' },
      },
    }),
  );
  expect(await carol.run('create', '-n', NS, '-f', file)).toMatchObject({ code: 0 });
  const requestedBy = JSON.parse(
    await admin.ok('get', 'ephemeralaccessrequest', 'mine', '-n', NS, '-o', 'jsonpath={.spec.requestedBy}'),
  ) as Identity;
  expect(requestedBy).toMatchObject(await whoami(carol));
});
