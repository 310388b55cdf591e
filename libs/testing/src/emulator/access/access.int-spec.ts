// Authentication, impersonation, RBAC and the review kinds of an emulator started with `authentication`,
// through raw HTTPS requests so the exact Status bodies kube-apiserver sends are what is asserted.
import { startEmulator, type Emulator } from '../start.js';
import { rawRequest, type RawResponse } from '../test-support.js';

let emu: Emulator;
let admin: string;
const alice = 'alice-static-token';
const GATEWAY = 'system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway';

const call = (token: string | undefined, method: string, path: string, body?: unknown, headers = {}) =>
  rawRequest(emu, { method, path, ...(token ? { token } : {}), body, headers });

const create = async (path: string, body: unknown) => {
  const res = await call(admin, 'POST', path, body);
  if (res.code !== 201) throw new Error(`create ${path}: ${JSON.stringify(res.body)}`);
};

const whoami = async (token: string | undefined, headers = {}) =>
  (await call(token, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, headers)).body[
    'status'
  ] as { userInfo: Record<string, unknown> };

const canI = async (token: string, attributes: Record<string, string>): Promise<RawResponse> =>
  call(token, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    spec: { resourceAttributes: attributes },
  });

beforeAll(async () => {
  emu = await startEmulator({
    authentication: {
      tokens: [{ token: alice, username: 'alice', uid: 'u-1', groups: ['team-a-people'] }],
    },
  });
  admin = emu.tokenFor('kubernetes-admin');
});

afterAll(async () => {
  await emu.stop();
});

describe('authentication', () => {
  it('maps tokens to users (static, minted, ServiceAccount, admin) with their groups', async () => {
    expect(emu.url).toMatch(/^https:/);
    expect((await whoami(alice)).userInfo).toEqual({
      username: 'alice',
      uid: 'u-1',
      groups: ['team-a-people', 'system:authenticated'],
    });
    expect((await whoami(emu.tokenFor(GATEWAY))).userInfo).toEqual({
      username: GATEWAY,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:rolepolicy-system', 'system:authenticated'],
    });
    expect((await whoami(admin)).userInfo['groups']).toContain('system:masters');
  });

  it('answers an unknown token 401 and runs a request without one as system:anonymous', async () => {
    const res = await call('nope', 'GET', '/api/v1/namespaces');
    expect(res.code).toBe(401);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' });
    const anonymous = await call(undefined, 'GET', '/api/v1/namespaces');
    expect(anonymous.body['message']).toBe(
      'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    expect((await call(undefined, 'GET', '/version')).code).toBe(200);
  });
});

describe('RBAC', () => {
  beforeAll(async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    await create(`${rbac}/clusterroles`, {
      metadata: { name: 'plan-approver' },
      rules: [
        { apiGroups: ['rolepolicy.io'], resources: ['postgrespolicyplans'], verbs: ['get', 'approve'] },
        { apiGroups: ['rolepolicy.io'], resources: ['postgrespolicyplans/status'], verbs: ['patch'] },
      ],
    });
    await create(`${rbac}/namespaces/team-a/rolebindings`, {
      metadata: { name: 'approvers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plan-approver' },
      subjects: [{ kind: 'Group', name: 'team-a-people' }],
    });
    await create(`${rbac}/namespaces/team-a/roles`, {
      metadata: { name: 'one-configmap' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'], verbs: ['get'] }],
    });
    await create(`${rbac}/namespaces/team-a/rolebindings`, {
      metadata: { name: 'alice-settings' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'one-configmap' },
      subjects: [{ kind: 'User', name: 'alice' }],
    });
    await create('/api/v1/namespaces/team-a/configmaps', { metadata: { name: 'settings' } });
    await create('/api/v1/namespaces/team-a/configmaps', { metadata: { name: 'other' } });
  });

  it('refuses with the API server 403 message, naming resource, subresource, group and namespace', async () => {
    const res = await call(
      alice,
      'PATCH',
      '/api/v1/namespaces/team-a/configmaps/other',
      {},
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    expect(res.code).toBe(403);
    expect(res.body).toMatchObject({
      reason: 'Forbidden',
      message:
        'configmaps "other" is forbidden: User "alice" cannot patch resource "configmaps" in API group "" in the namespace "team-a"',
      details: { name: 'other', group: '', kind: 'configmaps' },
    });
    const status = await call(
      emu.tokenFor('bob'),
      'PUT',
      '/apis/rolepolicy.io/v1alpha1/namespaces/team-a/postgrespolicyplans/p1/status',
      {},
    );
    expect(status.body['message']).toBe(
      'postgrespolicyplans.rolepolicy.io "p1" is forbidden: User "bob" cannot update resource "postgrespolicyplans/status" in API group "rolepolicy.io" in the namespace "team-a"',
    );
  });

  it('allows what a Role grants by resourceName only for that name, and nothing in other namespaces', async () => {
    expect((await call(alice, 'GET', '/api/v1/namespaces/team-a/configmaps/settings')).code).toBe(200);
    expect((await call(alice, 'GET', '/api/v1/namespaces/team-a/configmaps/other')).code).toBe(403);
    expect((await call(alice, 'GET', '/api/v1/namespaces/team-a/configmaps')).code).toBe(403);
    expect((await call(alice, 'GET', '/api/v1/namespaces/team-b/configmaps/settings')).code).toBe(403);
  });

  it('answers SelfSubjectAccessReview for custom verbs and subresources through group bindings', async () => {
    const approve = await canI(alice, {
      namespace: 'team-a',
      verb: 'approve',
      group: 'rolepolicy.io',
      resource: 'postgrespolicyplans',
    });
    expect(approve.body['status']).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "approvers/team-a" of ClusterRole "plan-approver" to Group "team-a-people"',
    });
    const elsewhere = await canI(alice, {
      namespace: 'team-b',
      verb: 'approve',
      group: 'rolepolicy.io',
      resource: 'postgrespolicyplans',
    });
    expect(elsewhere.body['status']).toEqual({ allowed: false });
    const status = await canI(alice, {
      namespace: 'team-a',
      verb: 'patch',
      group: 'rolepolicy.io',
      resource: 'postgrespolicyplans',
      subresource: 'status',
    });
    expect(status.body['status']).toMatchObject({ allowed: true });
  });

  it('aggregates ClusterRoles labelled for the default edit role', async () => {
    await create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'plans-edit', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } },
      rules: [{ apiGroups: ['rolepolicy.io'], resources: ['postgrespolicies'], verbs: ['create'] }],
    });
    await create('/apis/rbac.authorization.k8s.io/v1/namespaces/team-c/rolebindings', {
      metadata: { name: 'carol-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'User', name: 'carol' }],
    });
    const carol = emu.tokenFor('carol');
    const allowed = (verb: string, resource: string, group = '') =>
      canI(carol, { namespace: 'team-c', verb, group, resource }).then((r) => r.body['status']);
    expect(await allowed('create', 'postgrespolicies', 'rolepolicy.io')).toMatchObject({ allowed: true });
    expect(await allowed('list', 'configmaps')).toMatchObject({ allowed: true });
    expect(await allowed('create', 'rolebindings', 'rbac.authorization.k8s.io')).toMatchObject({
      allowed: false,
    });
  });

  it('answers SubjectAccessReview for a ServiceAccount subject', async () => {
    await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'gateway-approver' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plan-approver' },
      subjects: [{ kind: 'ServiceAccount', name: 'rolepolicy-k8s-gateway', namespace: 'rolepolicy-system' }],
    });
    const res = await call(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: {
        user: GATEWAY,
        groups: ['system:serviceaccounts'],
        resourceAttributes: { verb: 'get', group: 'rolepolicy.io', resource: 'postgrespolicyplans' },
      },
    });
    expect(res.body['status']).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "gateway-approver" of ClusterRole "plan-approver" to ServiceAccount "rolepolicy-system/rolepolicy-k8s-gateway"',
    });
    expect(
      (
        await call(alice, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'secrets' } },
        })
      ).code,
    ).toBe(403);
  });
});

describe('RBAC escalation prevention', () => {
  it('refuses a role or binding granting more than the caller holds, unless escalate or bind', async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    // dave administers team-d (the aggregated admin role lets him write Roles and RoleBindings).
    await create(`${rbac}/namespaces/team-d/rolebindings`, {
      metadata: { name: 'dave-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'User', name: 'dave' }],
    });
    const dave = emu.tokenFor('dave');
    const role = await call(dave, 'POST', `${rbac}/namespaces/team-d/roles`, {
      metadata: { name: 'approve-plans' },
      rules: [{ apiGroups: ['rolepolicy.io'], resources: ['postgrespolicyplans'], verbs: ['approve'] }],
    });
    expect(role.code).toBe(403);
    expect(role.body['message']).toBe(
      'roles.rbac.authorization.k8s.io "approve-plans" is forbidden: user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["rolepolicy.io"], Resources:["postgrespolicyplans"], Verbs:["approve"]}',
    );
    const binding = {
      metadata: { name: 'dave-approves' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plan-approver' },
      subjects: [{ kind: 'User', name: 'dave' }],
    };
    expect((await call(dave, 'POST', `${rbac}/namespaces/team-d/rolebindings`, binding)).code).toBe(403);
    // What he holds he may pass on: a Role over ConfigMaps.
    const configMaps = await call(dave, 'POST', `${rbac}/namespaces/team-d/roles`, {
      metadata: { name: 'cm-reader' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    });
    expect(configMaps.code).toBe(201);
    // With `bind` on plan-approver the admin delegates granting it, not holding it.
    await create(`${rbac}/clusterroles`, {
      metadata: { name: 'bind-plan-approver' },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles'],
          resourceNames: ['plan-approver'],
          verbs: ['bind'],
        },
      ],
    });
    await create(`${rbac}/namespaces/team-d/rolebindings`, {
      metadata: { name: 'dave-binds' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bind-plan-approver' },
      subjects: [{ kind: 'User', name: 'dave' }],
    });
    expect((await call(dave, 'POST', `${rbac}/namespaces/team-d/rolebindings`, binding)).code).toBe(201);
  });
});

describe('impersonation', () => {
  it('lets the admin act as another user (kubectl --as), who then gets that user’s permissions', async () => {
    const as = {
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['team-a-people'],
      'Impersonate-Uid': 'u-1',
    };
    expect((await whoami(admin, as)).userInfo).toEqual({
      username: 'alice',
      uid: 'u-1',
      groups: ['team-a-people', 'system:authenticated'],
    });
    expect((await call(admin, 'GET', '/api/v1/namespaces/team-a/configmaps/other', undefined, as)).code).toBe(
      403,
    );
    const sa = await whoami(admin, { 'Impersonate-User': GATEWAY });
    expect(sa.userInfo['groups']).toContain('system:serviceaccounts:rolepolicy-system');
  });

  it('refuses impersonation without the impersonate verb, as upstream words it', async () => {
    const res = await call(alice, 'GET', '/api/v1/namespaces', undefined, { 'Impersonate-User': 'bob' });
    expect(res.code).toBe(403);
    expect(res.body['message']).toBe(
      'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });
});

test('without the authentication option every request is the admin, as before', async () => {
  const open = await startEmulator();
  try {
    expect(open.url).toMatch(/^http:/);
    const res = await rawRequest(open, {
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      token: 'anything',
      body: {},
      headers: { 'Impersonate-User': 'alice' },
    });
    expect((res.body['status'] as { userInfo: { username: string } }).userInfo.username).toBe(
      'kubernetes-admin',
    );
  } finally {
    await open.stop();
  }
});
