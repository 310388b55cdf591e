// End to end through `kubectl rolepolicy` alone (issue 27, item 2): the real kubectl discovers the plugin
// on PATH; against an API that enforces authentication and RBAC (services as their ServiceAccounts), a
// pending plan (approval manual) goes from creation to Applied and an access request (approval Required)
// from creation to Active. The requester and the approver are two kubeconfig contexts, each decision is
// recorded with the identity the API authenticated and bound to what the object says (change digest,
// bundle hash, granted duration). Refusals exit 3 naming the rule; RBAC's 403 is quoted.
import { RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { GROUP } from '@rolepolicy/kube';
import { stringify } from 'yaml';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { KubectlPlugin, peopleKubeconfig } from './support/kubectl-plugin.js';

const APPROVER = 'security@example.com';
const REQUESTER = 'alice@example.com';

let stack: Stack;
let db: TargetDatabase;
let plugin: KubectlPlugin;
let reader: string;
let alice: string;
let proposed: string;

/** What each person may do: the approver decides, the requester asks for access and reads plans. */
const RULES: Readonly<Record<string, V1PolicyRule[]>> = {
  approver: [
    {
      apiGroups: [GROUP],
      resources: [
        'postgrespolicies',
        'postgrespolicyplans',
        'postgrespolicycandidates',
        'ephemeralaccesspolicies',
        'ephemeralaccessrequests',
      ],
      verbs: ['get', 'list'],
    },
    {
      apiGroups: [GROUP],
      resources: ['postgrespolicyplans/status', 'ephemeralaccessrequests/status', 'postgrespolicies'],
      verbs: ['patch'],
    },
    { apiGroups: [GROUP], resources: ['postgrespolicycandidates'], verbs: ['create'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  ],
  requester: [
    {
      apiGroups: [GROUP],
      resources: ['ephemeralaccesspolicies', 'postgrespolicyplans'],
      verbs: ['get', 'list'],
    },
    { apiGroups: [GROUP], resources: ['ephemeralaccessrequests'], verbs: ['get', 'list', 'create'] },
  ],
};

async function grant(role: string, username: string): Promise<void> {
  const rbac = stack.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const name = `plugin-e2e-${role}`;
  await rbac.createClusterRole({ body: { metadata: { name }, rules: RULES[role]! } });
  await rbac.createNamespacedRoleBinding({
    namespace: stack.namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: username }],
    },
  });
}

beforeAll(async () => {
  stack = await startStack({ apiAccessControl: true });
  db = await stack.createDatabase('plugin');
  await grant('approver', APPROVER);
  await grant('requester', REQUESTER);
  const { url, caPem } = stack.emulator;
  plugin = new KubectlPlugin(
    peopleKubeconfig(
      url,
      stack.namespace,
      [
        { context: 'approver', username: APPROVER, token: stack.emulator.tokenFor(APPROVER) },
        { context: 'requester', username: REQUESTER, token: stack.emulator.tokenFor(REQUESTER) },
      ],
      caPem,
    ),
  );
  [reader, alice, proposed] = [stack.role('reader'), stack.role('alice'), stack.role('proposed')];
}, 60_000);

afterAll(async () => {
  plugin?.dispose();
  await stack?.stop();
}, 60_000);

/** `kubectl apply -f -` of one manifest, as the cluster's admin sets things up. */
async function apply(kind: string, name: string, spec: Record<string, unknown>): Promise<void> {
  const manifest = stringify({ apiVersion: 'rolepolicy.io/v1alpha1', kind, metadata: { name }, spec });
  const { spawn } = await import('node:child_process');
  await new Promise<void>((done, fail) => {
    const child = spawn('/usr/bin/kubectl', ['apply', '-f', '-', '-n', stack.namespace], {
      env: { ...process.env, KUBECONFIG: stack.emulator.kubeconfigPath },
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => (code === 0 ? done() : fail(new Error(`kubectl apply: ${stderr}`))));
    child.stdin.end(manifest);
  });
}

async function isMember(role: string, member: string): Promise<boolean> {
  const rows = await db.sql(
    `SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
      WHERE r.rolname = $1 AND u.rolname = $2`,
    [role, member],
  );
  return rows.length === 1;
}

test('a pending plan goes from creation to Applied with plans, review and approve', async () => {
  await apply('PostgresPolicy', 'shop', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [
      { name: reader, login: false },
      { name: alice, login: true },
    ],
  });
  // reconcile --wait ends once the planner handled it: the plan waits for a decision.
  const reconciled = await plugin.ok(['reconcile', 'shop', '--wait', '--timeout', '60s']);
  expect(reconciled).toMatch(/policy shop: Ready=True\/Planned/);
  const planName = /plan (\S+) waits for a decision/.exec(reconciled)?.[1] ?? '';
  expect(planName).not.toBe('');

  const table = await plugin.ok(['plans']);
  expect(table.split('\n')[0]).toMatch(
    /^NAME\s+ORIGIN\s+PHASE\s+CHANGES\s+SUMMARY\s+STATEMENTS\s+WARNINGS\s+AGE$/,
  );
  expect(table).toMatch(new RegExp(`${planName}\\s+policy shop\\s+Pending\\s+2\\s+\\+2 roles`));
  expect((await plugin.ok(['plans', '-o', 'name'])).trim()).toBe(
    `postgrespolicyplan.rolepolicy.io/${planName}`,
  );

  const review = await waitFor('the review artifact of the plan', async () => {
    const run = await plugin.run(['review', planName, '--format', 'text']);
    return run.code === 0 ? run.stdout : undefined;
  });
  expect(review).toContain(reader);
  const html = await plugin.ok(['review', planName, '--output-file', '-']);
  expect(html).toMatch(/^<!DOCTYPE html>/i);

  const me = await plugin.ok(['whoami']);
  expect(me).toContain(`username: ${APPROVER}`);
  expect(me).toContain('source:   SelfSubjectReview');
  const username = APPROVER;
  // The requester may read the plan but not decide it: the API's 403 is quoted.
  const refused = await plugin.run(['approve', planName, '--context', 'requester']);
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain(
    `forbidden: postgrespolicyplans.rolepolicy.io "${planName}" is forbidden: User "${REQUESTER}" cannot patch resource "postgrespolicyplans/status"`,
  );
  const approved = await plugin.run(['approve', planName, '-m', 'CHG-1234', '--wait', '--timeout', '60s']);
  expect(approved.code).toBe(0);
  expect(approved.stdout).toContain(`Plan ${stack.namespace}/${planName} (policy shop, authoritative`);
  expect(approved.stdout).toContain(
    `postgrespolicyplan.rolepolicy.io/${planName} approved (decidedBy ${username})`,
  );
  expect(approved.stdout).toContain(`plan ${planName}: Applied`);
  expect((await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [alice])).length).toBe(1);

  const plan = JSON.parse(await plugin.ok(['plans', '--all', '-o', 'json'])).items.find(
    (p: { metadata: { name: string } }) => p.metadata.name === planName,
  );
  expect(plan.status.decidedBy.username).toBe(username);
  expect(plan.status.conditions).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ type: 'Approved', status: 'True', message: 'CHG-1234' }),
    ]),
  );

  const again = await plugin.run(['deny', planName]);
  expect(again.code).toBe(3);
  expect(again.stderr).toContain(
    `postgrespolicyplan "${stack.namespace}/${planName}": cannot be denied: status.conditions: the plan is already Approved (decidedBy ${username}); plan decisions are terminal`,
  );
  const missing = await plugin.run(['approve', 'no-such-plan']);
  expect(missing.code).toBe(3);
  expect(missing.stderr).toContain(`postgrespolicyplan "${stack.namespace}/no-such-plan" not found`);
}, 120_000);

test('an access request goes from creation to Active with access request and access approve', async () => {
  await apply('EphemeralAccessPolicy', 'read', {
    approval: { mode: 'Required' },
    justification: { required: true },
    maximumDuration: '1h',
    memberships: [{ role: reader, inherit: true }],
    postgresPolicyRef: { name: 'shop' },
  });
  const tooLong = await plugin.run([
    'access',
    'request',
    'read',
    '--subject',
    alice,
    '--for',
    '2h',
    '--justification',
    'x',
  ]);
  expect(tooLong.code).toBe(3);
  expect(tooLong.stderr).toContain("--for 2h exceeds the access policy's spec.maximumDuration 1h");
  const badDuration = await plugin.run(['access', 'request', 'read', '--subject', alice, '--for', '30x']);
  expect(badDuration.code).toBe(2);
  expect(badDuration.stderr).toContain('--for: must match ^([0-9]+[smh])+$');
  const noWhy = await plugin.run(['access', 'request', 'read', '--subject', alice, '--for', '30m']);
  expect(noWhy.code).toBe(3);
  expect(noWhy.stderr).toContain('--justification: required');
  const noDuration = await plugin.run([
    'access',
    'request',
    'read',
    '--subject',
    alice,
    '--justification',
    'x',
  ]);
  expect(noDuration.code).toBe(3);
  expect(noDuration.stderr).toContain('--for: required, the access policy has no spec.defaultDuration');

  const requested = await plugin.run([
    'access',
    'request',
    'read',
    '--subject',
    alice,
    '--for',
    '30m',
    '--justification',
    'INC-42',
    '--context',
    'requester',
    '--wait',
    '--timeout',
    '60s',
    '-o',
    'name',
  ]);
  expect(requested.code).toBe(0);
  const name = requested.stdout.trim().replace('ephemeralaccessrequest.rolepolicy.io/', '');
  expect(requested.stderr).toContain(`request ${name}: PendingApproval`);

  const list = await plugin.ok(['access', 'list']);
  expect(list).toMatch(new RegExp(`${name}\\s+read\\s+${alice}\\s+PendingApproval\\s+30m\\s+in \\d+m`));

  const approved = await plugin.run([
    'access',
    'approve',
    name,
    '--context',
    'approver',
    '--wait',
    '--timeout',
    '60s',
  ]);
  expect(approved.code).toBe(0);
  expect(approved.stdout).toContain(`  grants:        ${reader} to ${alice}`);
  expect(approved.stdout).toContain(`request ${name}: Active`);
  expect(await isMember(reader, alice)).toBe(true);

  const request = JSON.parse(await plugin.ok(['access', 'list', '-o', 'json'])).items[0];
  const decision = request.status.conditions.find((c: { type: string }) => c.type === 'Approved');
  expect(decision).toMatchObject({
    status: 'True',
    bundleHash: request.status.resolvedAccess.bundleHash,
    grantedDuration: '1800s',
  });
  // Each side is recorded as the API authenticated its context.
  expect(request.spec.requestedBy).toEqual({ username: REQUESTER, groups: ['system:authenticated'] });
  expect(request.status.decidedBy).toEqual({ username: APPROVER, groups: ['system:authenticated'] });

  const deny = await plugin.run(['access', 'deny', name]);
  expect(deny.code).toBe(3);
  expect(deny.stderr).toContain('the request is already Approved');
}, 120_000);

test('an approval after the window is refused, naming the deadline or the lapsed phase', async () => {
  await apply('EphemeralAccessPolicy', 'brief', {
    approval: { mode: 'Required' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '10m',
    pendingRequestTTL: '1s',
    memberships: [{ role: reader, inherit: true }],
    postgresPolicyRef: { name: 'shop' },
  });
  const name = (
    await plugin.ok([
      'access',
      'request',
      'brief',
      '--subject',
      alice,
      '--name',
      'late',
      '-o',
      'name',
      '--context',
      'requester',
    ])
  )
    .trim()
    .replace('ephemeralaccessrequest.rolepolicy.io/', '');
  await waitFor('the approval window of "late" has passed', async () => {
    const r = JSON.parse(await plugin.ok(['access', 'list', '-o', 'json'])).items.find(
      (i: { metadata: { name: string } }) => i.metadata.name === name,
    );
    const deadline = Date.parse(r?.status?.approvalExpiresAt ?? '');
    return !Number.isNaN(deadline) && Date.now() > deadline;
  });
  const late = await plugin.run(['access', 'approve', name]);
  expect(late.code).toBe(3);
  expect(late.stderr).toMatch(/approval window expired|status\.phase is ApprovalExpired/);
}, 60_000);

test('a candidate is created, planned and shown with candidate create, list, status and diff', async () => {
  await stack.reconciled('shop');
  const content = stringify({
    roles: [
      { name: reader, login: false },
      { name: alice, login: true },
      { name: proposed, login: false },
    ],
  });
  const created = await plugin.ok(['candidate', 'create', 'shop', '-f', '-'], 0, content);
  const name = /postgrespolicycandidate\.rolepolicy\.io\/(\S+) created/.exec(created)?.[1] ?? '';
  expect(created).toMatch(/content digest: sha256:[0-9a-f]{64}/);
  await waitFor('the candidate is Planned', async () =>
    (await plugin.ok(['candidate', 'list'])).match(new RegExp(`${name}\\s+shop\\s+Planned\\s+True/Planned`)),
  );
  const diff = await plugin.run(['candidate', 'diff', name]);
  expect(diff.code).toBe(2);
  expect(diff.stdout).toContain(proposed);
  const status = await plugin.ok(['candidate', 'status', name]);
  expect(status).toContain('next: kubectl rolepolicy approve');
}, 90_000);
