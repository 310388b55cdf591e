// deploy/base/admission.yaml (ADR 0022): the ValidatingAdmissionPolicy's CEL, evaluated as the API server would
// for a ConfigMap write by the k8s-gateway's ServiceAccount: the planner's SQL and review ConfigMaps pass (create,
// replace, delete), a ConfigMap of anyone else (kube-system's, a tenant's with a plan-like name) does not.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Environment } from '@marcbachmann/cel-js';
import { parseAllDocuments } from 'yaml';

type Policy = {
  readonly kind: string;
  readonly spec: {
    readonly matchConditions: readonly { readonly expression: string }[];
    readonly variables: readonly { readonly name: string; readonly expression: string }[];
    readonly validations: readonly { readonly expression: string; readonly message: string }[];
    readonly matchConstraints: {
      readonly resourceRules: readonly { readonly resources: readonly string[] }[];
    };
  };
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const docs = parseAllDocuments(readFileSync(path.join(root, 'deploy/base/admission.yaml'), 'utf8')).map(
  (d) => d.toJS() as Policy,
);
const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy')!;
const env = new Environment({ unlistedVariablesAreDyn: true });

const GATEWAY = 'system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway';

/** The messages of the validations that fail, or [] when the write is admitted (or not matched). */
function denials(username: string, object: unknown, oldObject: unknown): string[] {
  const request = { userInfo: { username } };
  if (!policy.spec.matchConditions.every((c) => env.parse(c.expression)({ request }) === true)) return [];
  const base = { request, object, oldObject };
  const variables: Record<string, unknown> = {};
  for (const v of policy.spec.variables) variables[v.name] = env.parse(v.expression)({ ...base, variables });
  return policy.spec.validations
    .filter((v) => env.parse(v.expression)({ ...base, variables }) !== true)
    .map((v) => v.message);
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
    expect(policy.spec.matchConstraints.resourceRules.flatMap((r) => r.resources)).toEqual(['configmaps']);
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
});
