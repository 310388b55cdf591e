// The plugin's decisions against the API emulator alone (no services), with authentication and RBAC on:
// decidedBy is who the API says the caller is (SelfSubjectReview, also under --as); a write racing ours is
// read again and re-checked, never overwritten; someone else's decision in between is a refusal; RBAC's
// refusal is quoted; an API without SelfSubjectReview falls back to the kubeconfig user, said on stderr.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { GROUP, VERSION, type PostgresPolicyPlan } from '@rolepolicy/kube';
import { startEmulator, type Emulator } from '@rolepolicy/testing';

import { runCli } from '../test-support/run-cli.js';

const CRD_DIR = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const NS = 'plugin';
const SLOW = 30_000;
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const plans = { group: GROUP, version: VERSION, plural: 'postgrespolicyplans', namespace: NS };

let emulator: Emulator;
let custom: CustomObjectsApi;
const kubeconfigs: Record<string, string> = {};

async function createPlan(api: CustomObjectsApi, name: string): Promise<void> {
  await api.createNamespacedCustomObject({
    ...plans,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'PostgresPolicyPlan',
      metadata: { name },
      spec: {
        managedDatabaseIdentity: 'db',
        policyGeneration: 1,
        policyRef: { name: 'shop' },
        reconciliationMode: 'authoritative',
      },
    },
  });
  await patchStatus(api, name, {
    phase: 'Pending',
    changeDigest: `sha256:${'c'.repeat(64)}`,
    changeSummary: { roles_created: 1, total: 1 },
    sqlStatements: 1,
    conditions: [
      { type: 'Computed', status: 'True', reason: 'PlanComputed' },
      { type: 'Approved', status: 'False', reason: 'PendingApproval' },
    ],
  });
}

function patchStatus(api: CustomObjectsApi, name: string, status: Record<string, unknown>): Promise<unknown> {
  return api.patchNamespacedCustomObjectStatus({ ...plans, name, body: { status } }, MERGE);
}

async function readPlan(name: string): Promise<PostgresPolicyPlan> {
  return (await custom.getNamespacedCustomObject({ ...plans, name })) as PostgresPolicyPlan;
}

/** Runs `rolepolicy <args> -n plugin` as `user` (a kubeconfig of its own). */
function as(user: string, ...args: string[]) {
  return runCli([...args, '-n', NS], { env: { KUBECONFIG: kubeconfigs[user]! } });
}

/** Makes `write` land once, just before the plugin's first status write of `name`. */
function beforeStatusWrite(name: string, write: () => Promise<unknown>): void {
  let armed = true;
  emulator.setRequestHook(async ({ method, path }) => {
    if (armed && method === 'PATCH' && path.endsWith(`/postgrespolicyplans/${name}/status`)) {
      armed = false;
      await write();
    }
  });
}

async function grant(rbac: RbacAuthorizationV1Api, role: string, users: readonly string[]): Promise<void> {
  await rbac.createNamespacedRoleBinding({
    namespace: NS,
    body: {
      metadata: { name: `${role}-binding` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: users.map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
    },
  });
}

beforeAll(async () => {
  emulator = await startEmulator({ crdDir: CRD_DIR, authentication: {} });
  const admin: KubeConfig = emulator.kubeConfig(NS);
  custom = admin.makeApiClient(CustomObjectsApi);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const read = {
    apiGroups: [GROUP],
    resources: ['postgrespolicyplans', 'postgrespolicies'],
    verbs: ['get', 'list'],
  };
  await rbac.createClusterRole({ body: { metadata: { name: 'plan-reader' }, rules: [read] } });
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'plan-approver' },
      rules: [read, { apiGroups: [GROUP], resources: ['postgrespolicyplans/status'], verbs: ['patch'] }],
    },
  });
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'impersonator' },
      rules: [{ apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] }],
    },
  });
  await grant(rbac, 'plan-reader', ['vera@example.com']);
  await grant(rbac, 'plan-approver', ['bob@example.com', 'dave@example.com']);
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'carol-impersonates' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonator' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol@example.com' }],
    },
  });
  for (const user of ['bob@example.com', 'vera@example.com', 'carol@example.com']) {
    kubeconfigs[user] = await emulator.kubeconfigFor(user, NS);
  }
  kubeconfigs['admin'] = emulator.kubeconfigPath;
}, SLOW);

afterEach(() => {
  emulator.setRequestHook(undefined);
});

afterAll(async () => {
  await emulator?.stop();
});

it(
  'decidedBy is the caller the API authenticated; a status write racing the approval (409) is read again and kept',
  async () => {
    await createPlan(custom, 'raced');
    beforeStatusWrite('raced', () => patchStatus(custom, 'raced', { revalidatedAt: '2026-11-27T12:00:00Z' }));
    const run = await as('bob@example.com', 'approve', 'raced', '-m', 'CHG-1');
    expect(run.stderr).toContain('changed while deciding');
    expect(run.stderr).not.toContain('SelfSubjectReview');
    expect(run.code).toBe(0);
    const plan = await readPlan('raced');
    expect(plan.status?.revalidatedAt).toBe('2026-11-27T12:00:00Z');
    expect(plan.status?.conditions).toEqual([
      expect.objectContaining({ type: 'Computed', status: 'True' }),
      expect.objectContaining({ type: 'Approved', status: 'True', message: 'CHG-1' }),
    ]);
    expect(plan.status?.decidedBy).toEqual({ username: 'bob@example.com', groups: ['system:authenticated'] });
  },
  SLOW,
);

it(
  "someone else's decision in between is a refusal (exit 3), never overwritten",
  async () => {
    await createPlan(custom, 'contested');
    beforeStatusWrite('contested', () =>
      patchStatus(custom, 'contested', {
        conditions: [{ type: 'Denied', status: 'True', reason: 'DeniedByUser' }],
        decidedBy: { username: 'carol@example.com' },
      }),
    );
    const run = await as('bob@example.com', 'approve', 'contested');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(
      `postgrespolicyplan "${NS}/contested": cannot be approved: status.conditions: the plan is already Denied (decidedBy carol@example.com); plan decisions are terminal`,
    );
    expect((await readPlan('contested')).status?.decidedBy?.username).toBe('carol@example.com');
  },
  SLOW,
);

it(
  "RBAC's refusal is quoted and exits 3: a reader may list plans but not decide them",
  async () => {
    await createPlan(custom, 'guarded');
    expect((await as('vera@example.com', 'plans')).stdout).toContain('guarded');
    const run = await as('vera@example.com', 'deny', 'guarded');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(
      `postgrespolicyplan "${NS}/guarded": forbidden: postgrespolicyplans.rolepolicy.io "guarded" is forbidden: User "vera@example.com" cannot patch resource "postgrespolicyplans/status"`,
    );
    expect((await readPlan('guarded')).status?.decidedBy).toBeUndefined();
  },
  SLOW,
);

it(
  '--as: the impersonated user decides when the caller may impersonate; otherwise the API refuses',
  async () => {
    await createPlan(custom, 'impersonated');
    const who = await as('carol@example.com', 'whoami', '--as', 'dave@example.com', '--as-group', 'auditors');
    expect(who.stdout).toContain('username: dave@example.com');
    expect(who.stdout).toContain('groups:   auditors, system:authenticated');
    expect(who.stdout).toContain('source:   SelfSubjectReview');
    const run = await as(
      'carol@example.com',
      'approve',
      'impersonated',
      '--as',
      'dave@example.com',
      '-o',
      'name',
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('postgrespolicyplan.rolepolicy.io/impersonated\n');
    expect((await readPlan('impersonated')).status?.decidedBy?.username).toBe('dave@example.com');
    const refused = await as('vera@example.com', 'approve', 'impersonated', '--as', 'dave@example.com');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('cannot impersonate resource "users"');
  },
  SLOW,
);

it(
  'lists plans across namespaces as a List, and refuses bad flags with exit 2',
  async () => {
    const listed = await as('admin', '-A', 'plans', '-o', 'json');
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout) as { kind: string; items: { metadata: { name: string } }[] };
    expect(list.kind).toBe('List');
    expect(list.items.map((i) => i.metadata.name)).toContain('guarded');
    const context = await as('admin', 'plans', '--context', 'nope');
    expect(context.code).toBe(2);
    expect(context.stderr).toContain('--context: the kubeconfig has no context "nope"');
    expect((await as('admin', 'plans', '-o', 'xml')).code).toBe(2);
    const missing = await as('admin', 'approve');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'plan'");
  },
  SLOW,
);

describe('an API without SelfSubjectReview (404)', () => {
  let plain: Emulator;
  let proxy: Server;
  let dir: string;

  beforeAll(async () => {
    plain = await startEmulator({ crdDir: CRD_DIR });
    const target = new URL(plain.url);
    // Everything reaches the emulator except the review, answered as an older API server would.
    proxy = createServer((req, res) => {
      if (req.url?.startsWith('/apis/authentication.k8s.io/v1/selfsubjectreviews')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'NotFound',
            code: 404,
          }),
        );
        return;
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    dir = await mkdtemp(join(tmpdir(), 'rp-plugin-'));
    kubeconfigs['old-api'] = join(dir, 'kubeconfig');
    const port = (proxy.address() as AddressInfo).port;
    await writeFile(
      kubeconfigs['old-api'],
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: old, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: erin@example.com, user: {token: t}}]',
        `contexts: [{name: old, context: {cluster: old, user: erin@example.com, namespace: ${NS}}}]`,
        'current-context: old',
        '',
      ].join('\n'),
    );
    await createPlan(plain.kubeConfig(NS).makeApiClient(CustomObjectsApi), 'old');
  }, SLOW);

  afterAll(async () => {
    await new Promise((done) => proxy?.close(done));
    await plain?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "records the kubeconfig's user name and says the API has not verified it",
    async () => {
      const run = await as('old-api', 'approve', 'old');
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(
        `the API does not serve SelfSubjectReview (authentication.k8s.io/v1); using the kubeconfig's user name "erin@example.com", which the API has not verified`,
      );
      const plan = (await plain
        .kubeConfig(NS)
        .makeApiClient(CustomObjectsApi)
        .getNamespacedCustomObject({ ...plans, name: 'old' })) as PostgresPolicyPlan;
      expect(plan.status?.decidedBy?.username).toBe('erin@example.com');
    },
    SLOW,
  );
});
