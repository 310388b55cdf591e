// Conformance of the ValidatingAdmissionPolicy evaluator with the behaviour the Kubernetes documentation
// describes ("Validating Admission Policy" page: the replica-limit policy with and without params,
// namespaceSelector bindings, messageExpression, variables, matchConditions, validationActions,
// failurePolicy, the authorizer library). Cases are written here from that description.
import type {
  AdmissionAttributes,
  Authorizer,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from './policy-types.js';
import {
  evaluateValidatingPolicies,
  type ParamLookup,
  type PolicyEvaluationInput,
} from './validating-policy.js';

const deployment = (replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'nginx', namespace: 'default', labels },
  spec: { replicas },
});

function request(
  object: Record<string, unknown> | null,
  overrides: Partial<AdmissionAttributes> = {},
): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subResource: '',
    name: 'nginx',
    namespace: 'default',
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    dryRun: false,
    object,
    oldObject: null,
    ...overrides,
  };
}

const deploymentRules = {
  resourceRules: [
    {
      apiGroups: ['apps'],
      apiVersions: ['v1'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['deployments'],
    },
  ],
};

function policy(name: string, spec: Partial<ValidatingAdmissionPolicy['spec']>): ValidatingAdmissionPolicy {
  return { metadata: { name }, spec: { failurePolicy: 'Fail', matchConstraints: deploymentRules, ...spec } };
}

function binding(
  name: string,
  policyName: string,
  spec: Partial<ValidatingAdmissionPolicyBinding['spec']> = {},
): ValidatingAdmissionPolicyBinding {
  return { metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } };
}

const testNamespace = { metadata: { name: 'default', labels: { environment: 'test' } } };

const demo = policy('demo-policy.example.com', {
  validations: [{ expression: 'object.spec.replicas <= 5' }],
});
const demoBinding = binding('demo-binding-test.example.com', 'demo-policy.example.com', {
  matchResources: { namespaceSelector: { matchLabels: { environment: 'test' } } },
});

const judge = (input: Partial<PolicyEvaluationInput> & Pick<PolicyEvaluationInput, 'request'>) =>
  evaluateValidatingPolicies({
    policies: [demo],
    bindings: [demoBinding],
    namespaceObject: testNamespace,
    ...input,
  });

describe('the replica limit policy of the documentation', () => {
  it('denies more than 5 replicas in a namespace the binding selects, with the documented message', () => {
    expect(judge({ request: request(deployment(6)) }).denial).toEqual({
      policy: 'demo-policy.example.com',
      binding: 'demo-binding-test.example.com',
      message:
        "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5",
      reason: 'Invalid',
      code: 422,
    });
  });

  it('admits 5 replicas, other namespaces, other operations and other resources', () => {
    expect(judge({ request: request(deployment(5)) }).denial).toBeUndefined();
    expect(
      judge({
        request: request(deployment(6)),
        namespaceObject: { metadata: { name: 'default', labels: {} } },
      }).denial,
    ).toBeUndefined();
    expect(
      judge({ request: request(null, { operation: 'DELETE', oldObject: deployment(6) }) }).denial,
    ).toBeUndefined();
    const replicaSet = request(deployment(6), {
      resource: { group: 'apps', version: 'v1', resource: 'replicasets' },
    });
    expect(judge({ request: replicaSet }).denial).toBeUndefined();
  });

  it('does nothing without a binding', () => {
    expect(judge({ request: request(deployment(6)), bindings: [] }).denial).toBeUndefined();
  });
});

describe('parameters', () => {
  const limits: Record<string, { maxReplicas: number }> = {
    'default/replica-limit-test.example.com': { maxReplicas: 3 },
    'default/replica-limit-prod.example.com': { maxReplicas: 100 },
  };
  const params: ParamLookup = (kind, where) => {
    if (kind.kind !== 'ReplicaLimit') return undefined;
    const all = Object.entries(limits)
      .filter(([k]) => k.startsWith(`${where.namespace}/`))
      .map(([k, v]) => ({
        metadata: { name: k.split('/')[1], labels: { env: k.includes('test') ? 'test' : 'prod' } },
        ...v,
      }));
    if (where.name !== undefined) return all.filter((p) => p.metadata.name === where.name);
    return all.filter(
      (p) => !where.selector?.matchLabels || p.metadata.labels.env === where.selector.matchLabels['env'],
    );
  };
  const withParams = policy('replicalimit-policy.example.com', {
    paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
    validations: [
      {
        expression: 'object.spec.replicas <= params.maxReplicas',
        messageExpression: "'object.spec.replicas must be no greater than ' + string(params.maxReplicas)",
        reason: 'Invalid',
      },
    ],
  });
  const bound = (paramRef: ValidatingAdmissionPolicyBinding['spec']['paramRef']) =>
    evaluateValidatingPolicies({
      policies: [withParams],
      bindings: [binding('replicalimit-binding-test.example.com', withParams.metadata.name, { paramRef })],
      request: request(deployment(4)),
      params,
    });

  it('reads the limit from the param the binding names, with the messageExpression', () => {
    expect(bound({ name: 'replica-limit-test.example.com', namespace: 'default' }).denial?.message).toBe(
      "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3",
    );
    expect(bound({ name: 'replica-limit-prod.example.com', namespace: 'default' }).denial).toBeUndefined();
  });

  it('evaluates against every param a selector finds (all must pass)', () => {
    expect(bound({ selector: {}, parameterNotFoundAction: 'Deny' }).denial).toBeDefined();
    expect(bound({ selector: { matchLabels: { env: 'prod' } } }).denial).toBeUndefined();
  });

  it('follows parameterNotFoundAction when no param exists', () => {
    expect(bound({ name: 'missing', parameterNotFoundAction: 'Allow' }).denial).toBeUndefined();
    expect(bound({ name: 'missing', parameterNotFoundAction: 'Deny' }).denial?.message).toMatch(
      /denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/,
    );
  });
});

describe('expressions', () => {
  it('offers variables, request.userInfo, oldObject and namespaceObject', () => {
    const p = policy('v', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['apps'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }],
      },
      variables: [
        {
          name: 'owner',
          expression:
            "has(object.metadata.labels) && 'owner' in object.metadata.labels ? object.metadata.labels['owner'] : ''",
        },
        { name: 'isAdmin', expression: "'admins' in request.userInfo.groups" },
      ],
      validations: [
        {
          expression: 'variables.isAdmin || variables.owner == request.userInfo.username',
          message: 'only the owner',
        },
        {
          expression: 'oldObject == null || oldObject.spec.replicas <= object.spec.replicas',
          message: 'no scale down',
        },
        { expression: "namespaceObject.metadata.labels['environment'] == 'test'", message: 'test only' },
      ],
    });
    const run = (r: AdmissionAttributes) =>
      evaluateValidatingPolicies({
        policies: [p],
        bindings: [binding('b', 'v')],
        request: r,
        namespaceObject: testNamespace,
      }).denial?.message;
    expect(run(request(deployment(2, { owner: 'alice' })))).toBeUndefined();
    expect(run(request(deployment(2, { owner: 'bob' })))).toMatch(/denied request: only the owner$/);
    expect(
      run(request(deployment(2), { userInfo: { username: 'root', groups: ['admins'] } })),
    ).toBeUndefined();
    expect(
      run(request(deployment(1, { owner: 'alice' }), { operation: 'UPDATE', oldObject: deployment(2) })),
    ).toMatch(/no scale down$/);
  });

  it('skips the policy when a matchCondition is false (the documentation excludes leases and nodes)', () => {
    const p = policy('m', {
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*'] },
        ],
      },
      matchConditions: [
        {
          name: 'exclude-leases',
          expression:
            "!(request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases')",
        },
        { name: 'exclude-kubelet-requests', expression: "!('system:nodes' in request.userInfo.groups)" },
      ],
      validations: [
        {
          expression: "has(object.metadata.labels) && 'team' in object.metadata.labels",
          message: 'team label required',
        },
      ],
    });
    const run = (r: AdmissionAttributes) =>
      evaluateValidatingPolicies({ policies: [p], bindings: [binding('b', 'm')], request: r }).denial;
    expect(run(request(deployment(1)))).toBeDefined();
    expect(
      run(request(deployment(1), { userInfo: { username: 'system:node:n1', groups: ['system:nodes'] } })),
    ).toBeUndefined();
    expect(
      run(
        request(deployment(1), {
          resource: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
        }),
      ),
    ).toBeUndefined();
  });

  it('answers errors per failurePolicy and maps reason to the status code', () => {
    const erroring = (failurePolicy: 'Fail' | 'Ignore') =>
      policy('e', { failurePolicy, validations: [{ expression: 'object.spec.missing.deeper == 1' }] });
    const run = (p: ValidatingAdmissionPolicy) =>
      evaluateValidatingPolicies({
        policies: [p],
        bindings: [binding('b', p.metadata.name)],
        request: request(deployment(1)),
      }).denial;
    expect(run(erroring('Ignore'))).toBeUndefined();
    expect(run(erroring('Fail'))?.message).toMatch(
      /denied request: expression 'object.spec.missing.deeper == 1' resulted in error: /,
    );
    const forbidden = policy('f', {
      validations: [{ expression: 'false', message: 'no', reason: 'Forbidden' }],
    });
    expect(run(forbidden)).toMatchObject({ reason: 'Forbidden', code: 403 });
  });
});

describe('validationActions', () => {
  it('turns failures into warnings with Warn, and reports Audit without denying', () => {
    const verdict = evaluateValidatingPolicies({
      policies: [demo],
      bindings: [binding('warn', demo.metadata.name, { validationActions: ['Warn', 'Audit'] })],
      request: request(deployment(6)),
    });
    expect(verdict.denial).toBeUndefined();
    expect(verdict.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'warn': failed expression: object.spec.replicas <= 5",
    ]);
    expect(verdict.audit).toHaveLength(1);
  });
});

describe('the authorizer library', () => {
  const authorizer: Authorizer = (a) => {
    const r = a.resource;
    if (a.user.username === 'alice' && r?.resource === 'deployments' && a.verb === 'approve')
      return { decision: 'allow', reason: 'RBAC: allowed by test' };
    if (a.user.username === 'system:serviceaccount:kube-system:replicaset-controller' && a.verb === 'update')
      return { decision: 'allow', reason: '' };
    return { decision: 'no-opinion', reason: '' };
  };
  const run = (expression: string, user = 'alice') =>
    evaluateValidatingPolicies({
      policies: [policy('a', { validations: [{ expression, messageExpression: "'checked'" }] })],
      bindings: [binding('b', 'a')],
      request: request(deployment(1), { userInfo: { username: user, groups: [] } }),
      authorizer,
    }).denial === undefined;

  it('checks the caller on any resource, on the request resource, and on a ServiceAccount', () => {
    expect(
      run("authorizer.group('apps').resource('deployments').namespace('default').check('approve').allowed()"),
    ).toBe(true);
    expect(run("authorizer.group('apps').resource('deployments').check('approve').allowed()", 'bob')).toBe(
      false,
    );
    expect(run("authorizer.requestResource.check('approve').allowed()")).toBe(true);
    expect(
      run(
        "authorizer.group('apps').resource('deployments').check('approve').reason() == 'RBAC: allowed by test'",
      ),
    ).toBe(true);
    expect(
      run(
        "authorizer.serviceAccount('kube-system', 'replicaset-controller').group('apps').resource('deployments').check('update').allowed()",
        'bob',
      ),
    ).toBe(true);
    expect(run("!authorizer.path('/healthz').check('get').errored()")).toBe(true);
  });
});
