// The emulator's ValidatingAdmissionPolicy plug-in: reads the stored policies, bindings, namespaces and
// param objects, asks @rolepolicy/kube's evaluator, and answers a denial with the API server's Status
// (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request:
// <message>`, reason and code from the validation, the message again as a cause, which kubectl prints
// as `The <resource> "<name>" is invalid: : ValidatingAdmissionPolicy …` for reason Invalid).
import {
  evaluateValidatingPolicies,
  labelSelectorMatches,
  type Authorizer,
  type ParamLookup,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@rolepolicy/kube';
import { ApiError, qualifiedResource } from '../errors.js';
import type { Registry, ValidatingStage } from '../registry.js';
import { storageKey } from '../resource-types.js';
import type { KubeObject } from '../types.js';
import { ADMIN_USER } from './authn.js';

const POLICIES = 'admissionregistration.k8s.io/validatingadmissionpolicies';
const BINDINGS = 'admissionregistration.k8s.io/validatingadmissionpolicybindings';

function paramLookup(registry: Registry): ParamLookup {
  return (paramKind, where) => {
    const [group, version] = paramKind.apiVersion.includes('/')
      ? (paramKind.apiVersion.split('/') as [string, string])
      : ['', paramKind.apiVersion];
    const type = registry
      .allTypes()
      .find((t) => t.group === group && t.version === version && t.kind === paramKind.kind);
    if (!type) return undefined;
    if (type.namespaced && where.namespace === '') return [];
    return registry.store
      .list(storageKey(type), type.namespaced ? where.namespace : undefined)
      .filter((o) => where.name === undefined || o.metadata.name === where.name)
      .filter((o) => where.selector === undefined || labelSelectorMatches(where.selector, o.metadata.labels))
      .map((o) => registry.present(type, o));
  };
}

/** The request's Namespace; one the emulator would create on first use looks as it will once created. */
function namespaceObject(registry: Registry, name: string): KubeObject {
  return (
    registry.store.get('/namespaces', undefined, name) ?? {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    }
  );
}

/** The validating stage backed by the stored policies; `authorize` backs the CEL `authorizer`. */
export function policyAdmission(registry: Registry, authorize: Authorizer): ValidatingStage {
  const params = paramLookup(registry);
  return (r) => {
    const bindings = registry.store.list(BINDINGS) as unknown as ValidatingAdmissionPolicyBinding[];
    if (bindings.length === 0) return;
    const policies = registry.store.list(POLICIES) as unknown as ValidatingAdmissionPolicy[];
    const namespace = r.namespace ?? '';
    const verdict = evaluateValidatingPolicies({
      policies,
      bindings,
      request: {
        operation: r.operation,
        kind: { group: r.type.group, version: r.type.version, kind: r.type.kind },
        resource: { group: r.type.group, version: r.type.version, resource: r.type.plural },
        subResource: r.subresource,
        name: r.name,
        namespace,
        userInfo: r.options.user ?? ADMIN_USER,
        dryRun: r.options.dryRun ?? false,
        object: r.object,
        oldObject: r.oldObject,
      },
      namespaceObject: namespace === '' ? null : namespaceObject(registry, namespace),
      params,
      authorizer: authorize,
    });
    r.options.warnings?.push(...verdict.warnings);
    const denial = verdict.denial;
    if (!denial) return;
    throw new ApiError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `${qualifiedResource(r.type)} "${r.name}" is forbidden: ${denial.message}`,
      reason: denial.reason,
      details: {
        name: r.name,
        group: r.type.group,
        kind: r.type.plural,
        causes: [{ message: denial.message }],
      },
      code: denial.code,
    });
  };
}
