// deploy/base/admission.yaml (ADR 0022): the ValidatingAdmissionPolicy's CEL, evaluated as the API server would
// (through tools/deploy/admission-eval.ts) for a ConfigMap write by the k8s-gateway's ServiceAccount: the planner's SQL and review ConfigMaps pass (create,
// replace, delete), a ConfigMap of anyone else (kube-system's, a tenant's with a plan-like name) does not.
import { denials as evaluate, loadPolicies } from './admission-eval.js';

const policy = loadPolicies('deploy/base/admission.yaml').get('rolepolicy-k8s-gateway-configmaps')!;

/** The parameter ConfigMap of deploy/admission/params.yaml, in the install namespace. */
const params = (namespace = 'rolepolicy-system') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'rolepolicy-admission', namespace },
  data: { controllerServiceAccount: 'rolepolicy-k8s-gateway' },
});

const GATEWAY = 'system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway';

/** The messages of the validations that fail, or [] when the write is admitted (or not matched). */
function denials(
  username: string,
  object: { metadata: { name: string; namespace: string } } | null,
  oldObject: { metadata: { name: string; namespace: string } } | null,
  parameters: unknown = params(),
): string[] {
  const target = (object ?? oldObject)!;
  return evaluate(policy, {
    operation: object === null ? 'DELETE' : oldObject === null ? 'CREATE' : 'UPDATE',
    group: '',
    resource: 'configmaps',
    namespace: target.metadata.namespace,
    name: target.metadata.name,
    caller: { username },
    object,
    oldObject,
    params: parameters,
  });
}

const controlled = (kind: string) => [
  {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind,
    name: 'p',
    uid: 'u',
    controller: true,
    blockOwnerDeletion: true,
  },
];
const configMap = (name: string, ownerReferences?: unknown) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a', ...(ownerReferences ? { ownerReferences } : {}) },
});

describe('admission policy rolepolicy-k8s-gateway-configmaps', () => {
  it('matches ConfigMap writes only', () => {
    expect(policy.spec.matchConstraints.resourceRules.flatMap((r) => [...r.resources])).toEqual([
      'configmaps',
    ]);
  });

  it.each(['PostgresPolicy', 'PostgresPolicyCandidate', 'PostgresPolicyPlan'])(
    'admits the SQL and review ConfigMaps controlled by a %s: create, replace, delete',
    (kind) => {
      const sql = configMap('orders-1a2b-sql', controlled(kind));
      const review = configMap('orders-1a2b-review', controlled(kind));
      expect(denials(GATEWAY, sql, null)).toEqual([]);
      expect(denials(GATEWAY, review, review)).toEqual([]);
      expect(denials(GATEWAY, null, sql)).toEqual([]);
    },
  );

  it('refuses a ConfigMap of kube-system, or one named like a plan that rolepolicy does not control', () => {
    const coredns = { ...configMap('coredns'), metadata: { name: 'coredns', namespace: 'kube-system' } };
    expect(denials(GATEWAY, coredns, coredns)).toHaveLength(2);
    expect(denials(GATEWAY, null, coredns)).toHaveLength(2);
    const tenant = configMap('team-settings-sql');
    expect(denials(GATEWAY, tenant, tenant)).toEqual([
      expect.stringMatching(/controlled by a rolepolicy.io/),
    ]);
  });

  it('refuses taking a ConfigMap over by adding a rolepolicy owner, and a foreign controller', () => {
    const before = configMap('team-settings-sql');
    expect(
      denials(GATEWAY, configMap('team-settings-sql', controlled('PostgresPolicy')), before),
    ).toHaveLength(1);
    const deployment = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u', controller: true }];
    expect(denials(GATEWAY, configMap('x-sql', deployment), null)).toHaveLength(1);
  });

  it('does not concern anyone but the k8s-gateway', () => {
    expect(denials('alice@example.com', configMap('anything'), null)).toEqual([]);
  });

  it('knows the gateway by the namespace of the parameter ConfigMap: an install elsewhere keeps working', () => {
    const elsewhere = 'system:serviceaccount:db-ops:rolepolicy-k8s-gateway';
    expect(denials(elsewhere, configMap('coredns'), null, params('db-ops'))).toHaveLength(2);
    expect(denials(GATEWAY, configMap('coredns'), null, params('db-ops'))).toEqual([]);
  });

  it('without its parameter (parameterNotFoundAction Allow) narrows nothing rather than stop every ConfigMap write', () => {
    expect(denials(GATEWAY, configMap('coredns'), null, null)).toEqual([]);
    expect(denials('alice@example.com', configMap('anything'), null, null)).toEqual([]);
  });
});
