// deploy/base/admission.yaml (ADR 0022): the ValidatingAdmissionPolicy, evaluated by @rolepolicy/kube's
// evaluateValidatingPolicies (the emulator's) as the API server would
// for a ConfigMap write by the k8s-gateway's ServiceAccount: the planner's SQL and review ConfigMaps pass (create,
// replace, delete), a ConfigMap of anyone else (kube-system's, a tenant's with a plan-like name) does not. The
// gateway is known by the parameter ConfigMap rolepolicy-admission (deploy/admission/params.yaml, ADR 0026).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  evaluateValidatingPolicies,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@rolepolicy/kube';
import { parseAllDocuments } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const docs = parseAllDocuments(readFileSync(path.join(root, 'deploy/base/admission.yaml'), 'utf8')).map(
  (d) => d.toJS() as { kind: string },
);
const policies = docs.filter(
  (d) => d.kind === 'ValidatingAdmissionPolicy',
) as unknown as ValidatingAdmissionPolicy[];
const bindings = docs.filter(
  (d) => d.kind === 'ValidatingAdmissionPolicyBinding',
) as unknown as ValidatingAdmissionPolicyBinding[];
const policy = policies[0]!;

const GATEWAY = 'system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway';

/** The parameter ConfigMap of deploy/admission/params.yaml, in the install namespace. */
const params = (namespace = 'rolepolicy-system') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'rolepolicy-admission', namespace },
  data: { controllerServiceAccount: 'rolepolicy-k8s-gateway' },
});

type ConfigMap = { metadata: { name: string; namespace: string } };

/**
 * The messages of the validations that fail (as the API server's evaluator reports them; empty when the
 * write is admitted or not matched), for a ConfigMap create (old null), replace, or delete (new null).
 */
function denials(
  username: string,
  object: ConfigMap | null,
  oldObject: ConfigMap | null,
  parameters: Record<string, unknown> | null = params(),
): string[] {
  const subject = (object ?? oldObject)!;
  const verdict = evaluateValidatingPolicies({
    policies,
    params: () => (parameters === null ? [] : [parameters]),
    // Every failure, not just the first: the Warn action reports each.
    bindings: bindings.map((b) => ({ ...b, spec: { ...b.spec, validationActions: ['Warn' as const] } })),
    request: {
      operation: object === null ? 'DELETE' : oldObject === null ? 'CREATE' : 'UPDATE',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      subResource: '',
      name: subject.metadata.name,
      namespace: subject.metadata.namespace,
      userInfo: { username, groups: ['system:authenticated'] },
      dryRun: false,
      object,
      oldObject,
    },
  });
  return verdict.warnings.map((w) => w.replace(/^Validation failed for .*?: /, ''));
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
    expect(policy.spec.matchConstraints?.resourceRules?.flatMap((r) => r.resources)).toEqual(['configmaps']);
  });

  it('denies through its binding with the API server message', () => {
    const verdict = evaluateValidatingPolicies({
      policies,
      params: () => [params()],
      bindings,
      request: {
        operation: 'CREATE',
        kind: { group: '', version: 'v1', kind: 'ConfigMap' },
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        subResource: '',
        name: 'coredns',
        namespace: 'kube-system',
        userInfo: { username: GATEWAY, groups: [] },
        dryRun: false,
        object: configMap('coredns'),
        oldObject: null,
      },
    });
    expect(verdict.denial).toMatchObject({
      reason: 'Forbidden',
      code: 403,
      message:
        "ValidatingAdmissionPolicy 'rolepolicy-k8s-gateway-configmaps' with binding 'rolepolicy-k8s-gateway-configmaps' denied request: the k8s-gateway writes only ConfigMaps named <plan>-sql or <plan>-review",
    });
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
