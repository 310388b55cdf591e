// ValidatingAdmissionPolicies enforced by the emulator over HTTPS with several identities: a decision
// on the status subresource needs the `approve` verb (CEL authorizer) and the caller's own name
// (request.userInfo); params from a ConfigMap; Warn as a Warning header; DELETE; namespaceSelector.
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '../start.js';
import { rawRequest } from '../test-support.js';

const crdDir = fileURLToPath(new URL('../testdata', import.meta.url));
const WIDGETS = '/apis/emulator.test/v1/namespaces/team-a/widgets';
const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let emu: Emulator;
let admin: string;

const call = (token: string, method: string, path: string, body?: unknown, contentType?: string) =>
  rawRequest(emu, { method, path, token, body, ...(contentType ? { contentType } : {}) });

async function create(path: string, body: unknown): Promise<void> {
  const res = await call(admin, 'POST', path, body);
  if (res.code !== 201) throw new Error(`create ${path}: ${JSON.stringify(res.body)}`);
}

const decide = (token: string, name: string, decidedBy: string) =>
  call(
    token,
    'PATCH',
    `${WIDGETS}/${name}/status`,
    { status: { decision: 'Approved', decidedBy } },
    'application/merge-patch+json',
  );

beforeAll(async () => {
  emu = await startEmulator({ crdDir, authentication: {} });
  admin = emu.tokenFor('kubernetes-admin');
  // Everyone in team-a may write widgets and their status; only approvers hold `approve`.
  await create(`${RBAC}/clusterroles`, {
    metadata: { name: 'widget-writer' },
    rules: [
      {
        apiGroups: ['emulator.test'],
        resources: ['widgets', 'widgets/status'],
        verbs: ['get', 'create', 'patch', 'delete'],
      },
    ],
  });
  await create(`${RBAC}/clusterroles`, {
    metadata: { name: 'widget-approver' },
    rules: [{ apiGroups: ['emulator.test'], resources: ['widgets'], verbs: ['approve'] }],
  });
  await create(`${RBAC}/namespaces/team-a/rolebindings`, {
    metadata: { name: 'writers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-writer' },
    subjects: [{ kind: 'Group', name: 'system:authenticated' }],
  });
  await create(`${RBAC}/namespaces/team-a/rolebindings`, {
    metadata: { name: 'approvers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-approver' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  await create(VAP, {
    metadata: { name: 'decisions' },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['emulator.test'],
            apiVersions: ['*'],
            operations: ['UPDATE'],
            resources: ['widgets/status'],
          },
        ],
      },
      matchConditions: [
        { name: 'a-decision', expression: 'has(object.status) && has(object.status.decision)' },
      ],
      validations: [
        {
          expression:
            "authorizer.group('emulator.test').resource('widgets').namespace(request.namespace).name(request.name).check('approve').allowed()",
          messageExpression: "'user ' + request.userInfo.username + ' may not approve widgets'",
          reason: 'Forbidden',
        },
        {
          expression: 'object.status.decidedBy == request.userInfo.username',
          message: 'decidedBy must be the caller',
        },
        {
          expression:
            "params.data.allowSelfApproval == 'true' || object.spec.requestedBy != request.userInfo.username",
          message: 'a requester cannot decide their own widget',
        },
      ],
    },
  });
  await create('/api/v1/namespaces/team-a/configmaps', {
    metadata: { name: 'decision-settings' },
    data: { allowSelfApproval: 'false' },
  });
  await create(VAPB, {
    metadata: { name: 'decisions-team-a' },
    spec: {
      policyName: 'decisions',
      validationActions: ['Deny'],
      paramRef: { name: 'decision-settings', parameterNotFoundAction: 'Deny' },
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } },
    },
  });
});

afterAll(async () => {
  await emu.stop();
});

describe('a ValidatingAdmissionPolicy on a status subresource', () => {
  beforeAll(async () => {
    await create(WIDGETS, { metadata: { name: 'w1' }, spec: { requestedBy: 'bob' } });
    await create(WIDGETS, { metadata: { name: 'w2' }, spec: { requestedBy: 'alice' } });
  });

  it('refuses a caller without approve with the API server Status', async () => {
    const res = await decide(emu.tokenFor('bob'), 'w1', 'bob');
    expect(res.code).toBe(403);
    expect(res.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message:
        "widgets.emulator.test \"w1\" is forbidden: ValidatingAdmissionPolicy 'decisions' with binding 'decisions-team-a' denied request: user bob may not approve widgets",
      details: {
        name: 'w1',
        group: 'emulator.test',
        kind: 'widgets',
        causes: [
          {
            message:
              "ValidatingAdmissionPolicy 'decisions' with binding 'decisions-team-a' denied request: user bob may not approve widgets",
          },
        ],
      },
    });
  });

  it('refuses a forged decidedBy (422 Invalid) and a self-approval, admits the real approver', async () => {
    const alice = emu.tokenFor('alice');
    const forged = await decide(alice, 'w1', 'carol');
    expect(forged.code).toBe(422);
    expect(forged.body['message']).toMatch(/denied request: decidedBy must be the caller$/);
    expect((await decide(alice, 'w2', 'alice')).body['message']).toMatch(
      /a requester cannot decide their own widget$/,
    );
    const ok = await decide(alice, 'w1', 'alice');
    expect(ok.code).toBe(200);
    expect(ok.body['status']).toEqual({ decision: 'Approved', decidedBy: 'alice' });
  });

  it('leaves main-resource writes and other namespaces alone', async () => {
    const bob = emu.tokenFor('bob');
    const res = await call(
      bob,
      'PATCH',
      `${WIDGETS}/w1`,
      { spec: { size: 2 } },
      'application/merge-patch+json',
    );
    expect(res.code).toBe(200);
    await create('/apis/emulator.test/v1/namespaces/team-b/widgets', { metadata: { name: 'w' }, spec: {} });
    const other = await call(
      admin,
      'PATCH',
      '/apis/emulator.test/v1/namespaces/team-b/widgets/w/status',
      { status: { decision: 'Approved', decidedBy: 'nobody' } },
      'application/merge-patch+json',
    );
    expect(other.code).toBe(200);
  });
});

describe('validationActions and operations', () => {
  beforeAll(async () => {
    await create(VAP, {
      metadata: { name: 'protected' },
      spec: {
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'DELETE'],
              resources: ['configmaps'],
            },
          ],
        },
        validations: [
          {
            expression:
              "request.operation != 'DELETE' || !has(oldObject.metadata.labels) || !('protected' in oldObject.metadata.labels)",
            message: 'protected ConfigMaps cannot be deleted',
          },
          { expression: 'object == null || has(object.data)', message: 'a ConfigMap should carry data' },
        ],
      },
    });
    await create(VAPB, {
      metadata: { name: 'protected-deny' },
      spec: { policyName: 'protected', validationActions: ['Deny'] },
    });
  });

  it('refuses a DELETE by oldObject', async () => {
    await create('/api/v1/namespaces/team-c/configmaps', {
      metadata: { name: 'keep', labels: { protected: 'yes' } },
      data: {},
    });
    const res = await call(admin, 'DELETE', '/api/v1/namespaces/team-c/configmaps/keep');
    expect(res.code).toBe(422);
    expect(res.body['message']).toBe(
      "configmaps \"keep\" is forbidden: ValidatingAdmissionPolicy 'protected' with binding 'protected-deny' denied request: protected ConfigMaps cannot be deleted",
    );
  });

  it('sends a Warning header for a Warn binding and admits the write', async () => {
    await create(VAPB, {
      metadata: { name: 'data-warn' },
      spec: {
        policyName: 'protected',
        validationActions: ['Warn'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-d' } } },
      },
    });
    // While the Deny binding exists it refuses; without it only the Warn binding is left.
    const res = await call(admin, 'POST', '/api/v1/namespaces/team-d/configmaps', {
      metadata: { name: 'empty' },
    });
    expect(res.code).toBe(422);
    await call(admin, 'DELETE', `${VAPB}/protected-deny`);
    const warned = await call(admin, 'POST', '/api/v1/namespaces/team-d/configmaps', {
      metadata: { name: 'empty' },
    });
    expect(warned.code).toBe(201);
    expect(warned.headers['warning']).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy 'protected' with binding 'data-warn': a ConfigMap should carry data"`,
    );
  });
});
