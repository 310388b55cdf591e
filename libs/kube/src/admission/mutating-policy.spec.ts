// MutatingAdmissionPolicy evaluation: the documentation's sidecar examples in both patch types, filling a
// field from the caller's identity, matchConditions, failurePolicy, and the message-literal rewrite.
import { rewriteStructs } from './cel-struct.js';
import { applyMutatingPolicies, type MutationInput } from './mutating-policy.js';
import type { AdmissionAttributes, MutatingAdmissionPolicy, PolicyMutation } from './policy-types.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
};

function request(
  object: Record<string, unknown>,
  overrides: Partial<AdmissionAttributes> = {},
): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: '',
    name: 'p',
    namespace: 'default',
    userInfo: { username: 'alice', uid: 'u-1', groups: ['team-a', 'system:authenticated'] },
    dryRun: false,
    object,
    oldObject: null,
    ...overrides,
  };
}

function policy(
  mutations: PolicyMutation[],
  spec: Partial<MutatingAdmissionPolicy['spec']> = {},
): MutatingAdmissionPolicy {
  return {
    metadata: { name: 'sidecar-policy.example.com' },
    spec: {
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['*'],
            apiVersions: ['*'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['*', '*/status'],
          },
        ],
      },
      failurePolicy: 'Fail',
      mutations,
      ...spec,
    },
  };
}

const run = (p: MutatingAdmissionPolicy, r: AdmissionAttributes, extra: Partial<MutationInput> = {}) =>
  applyMutatingPolicies({
    policies: [p],
    bindings: [
      { metadata: { name: 'sidecar-binding-test.example.com' }, spec: { policyName: p.metadata.name } },
    ],
    request: r,
    ...extra,
  });

test('an ApplyConfiguration adds the documentation’s init container', () => {
  const p = policy([
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: {
        expression:
          'Object{spec: Object.spec{initContainers: [Object.spec.initContainers{name: "mesh-proxy", image: "mesh/proxy:v1.0.0", args: ["proxy", "sidecar"], restartPolicy: "Always"}]}}',
      },
    },
  ]);
  const result = run(p, request(pod));
  expect(result.denial).toBeUndefined();
  expect(result.applied).toEqual(['sidecar-policy.example.com/sidecar-binding-test.example.com']);
  expect(result.object).toEqual({
    ...pod,
    spec: {
      containers: pod.spec.containers,
      initContainers: [
        {
          name: 'mesh-proxy',
          image: 'mesh/proxy:v1.0.0',
          args: ['proxy', 'sidecar'],
          restartPolicy: 'Always',
        },
      ],
    },
  });
});

test('a JSONPatch appends to a list, conditioned on the object', () => {
  const p = policy(
    [
      {
        patchType: 'JSONPatch',
        jsonPatch: {
          expression:
            '[JSONPatch{op: "add", path: "/spec/initContainers", value: []}, JSONPatch{op: "add", path: "/spec/initContainers/-", value: Object.spec.initContainers{name: "mesh-proxy", image: "mesh-proxy/v1.0.0"}}]',
        },
      },
    ],
    { matchConditions: [{ name: 'no-init-yet', expression: '!has(object.spec.initContainers)' }] },
  );
  expect(run(p, request(pod)).object?.['spec']).toMatchObject({
    initContainers: [{ name: 'mesh-proxy', image: 'mesh-proxy/v1.0.0' }],
  });
  const already = { ...pod, spec: { ...pod.spec, initContainers: [{ name: 'x' }] } };
  expect(run(p, request(already))).toEqual({ object: already, applied: [] });
});

test('a decision records the caller as decidedBy (what an overlay of issue 26 does)', () => {
  const p = policy(
    [
      {
        patchType: 'ApplyConfiguration',
        applyConfiguration: {
          expression:
            'Object{status: Object.status{decidedBy: Object.status.decidedBy{username: request.userInfo.username, uid: request.userInfo.uid, groups: request.userInfo.groups}}}',
        },
      },
    ],
    {
      matchConditions: [
        {
          name: 'a-decision',
          expression: "request.subResource == 'status' && has(object.status.conditions)",
        },
      ],
    },
  );
  const plan = {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: { name: 'p' },
    status: { conditions: [{ type: 'Approved', status: 'True' }], decidedBy: { username: 'mallory' } },
  };
  const result = run(p, request(plan, { operation: 'UPDATE', subResource: 'status', oldObject: plan }));
  expect(result.object?.['status']).toEqual({
    conditions: [{ type: 'Approved', status: 'True' }],
    decidedBy: { username: 'alice', uid: 'u-1', groups: ['team-a', 'system:authenticated'] },
  });
});

test('an erroring mutation denies under failurePolicy Fail and is skipped under Ignore', () => {
  const broken: PolicyMutation = {
    patchType: 'JSONPatch',
    jsonPatch: { expression: '[JSONPatch{op: "replace", path: "/spec/missing/x", value: 1}]' },
  };
  expect(run(policy([broken]), request(pod)).denial).toMatch(
    /^MutatingAdmissionPolicy 'sidecar-policy.example.com' with binding 'sidecar-binding-test.example.com' denied request: /,
  );
  expect(run(policy([broken], { failurePolicy: 'Ignore' }), request(pod))).toEqual({
    object: pod,
    applied: [],
  });
});

test('message literals become maps; strings and field selections are left alone', () => {
  expect(rewriteStructs('Object{spec: Object.spec{x: "Object{a: 1}", y: [1, 2]}}')).toBe(
    '{"spec": {"x": "Object{a: 1}", "y": [1, 2]}}',
  );
  expect(rewriteStructs('{"a": object.spec.x, b: 1}')).toBe('{"a": object.spec.x, b: 1}');
  expect(rewriteStructs("JSONPatch{op: 'add', path: '/a', value: f(x, y)}")).toBe(
    `{"op": 'add', "path": '/a', "value": f(x, y)}`,
  );
});
