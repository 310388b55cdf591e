// The emulator's ValidatingAdmissionPolicy plug-in: reads the stored policies, bindings, namespaces and
// param objects, asks @rolepolicy/kube's evaluator, and answers a denial with the API server's Status
// (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request:
// <message>`, reason and code from the validation, the message again as a cause, which kubectl prints
// as `The <resource> "<name>" is invalid: : ValidatingAdmissionPolicy …` for reason Invalid).
import {
  applyMutatingPolicies,
  evaluateValidatingPolicies,
  type MutatingAdmissionPolicy,
  type MutatingAdmissionPolicyBinding,
  type PolicyRequestInput,
  labelSelectorMatches,
  type Authorizer,
  type ParamLookup,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@rolepolicy/kube';
import { ApiError, qualifiedResource } from '../errors.js';
import type { MutatingStage, PolicyRequest, Registry, ValidatingStage } from '../registry.js';
import { storageKey } from '../resource-types.js';
import type { KubeObject } from '../types.js';
import { ADMIN_USER } from './authn.js';

const POLICIES = 'admissionregistration.k8s.io/validatingadmissionpolicies';
const BINDINGS = 'admissionregistration.k8s.io/validatingadmissionpolicybindings';
const MUTATING = 'admissionregistration.k8s.io/mutatingadmissionpolicies';
const MUTATING_BINDINGS = 'admissionregistration.k8s.io/mutatingadmissionpolicybindings';

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

/** The evaluator's view of one write: attributes, namespace, params and the authorizer. */
function requestInput(registry: Registry, r: PolicyRequest, authorize: Authorizer): PolicyRequestInput {
  const namespace = r.namespace ?? '';
  return {
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
    params: paramLookup(registry),
    authorizer: authorize,
  };
}

/**
 * The mutating stage backed by the stored MutatingAdmissionPolicies (v1beta1); a refusal under
 * failurePolicy Fail is a 403 naming the policy and binding.
 */
export function mutatingPolicyAdmission(registry: Registry, authorize: Authorizer): MutatingStage {
  return (r) => {
    const bindings = registry.store.list(MUTATING_BINDINGS) as unknown as MutatingAdmissionPolicyBinding[];
    if (bindings.length === 0) return r.object;
    const policies = registry.store.list(MUTATING) as unknown as MutatingAdmissionPolicy[];
    const result = applyMutatingPolicies({ policies, bindings, ...requestInput(registry, r, authorize) });
    if (result.denial !== undefined) throw forbiddenByPolicy(r, result.denial, 'Forbidden', 403);
    return (result.object ?? r.object) as KubeObject;
  };
}

/** The API server's Status for a policy refusal (admission.NewForbidden with reason and code set). */
function forbiddenByPolicy(r: PolicyRequest, message: string, reason: string, code: number): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${qualifiedResource(r.type)} "${r.name}" is forbidden: ${message}`,
    reason,
    details: { name: r.name, group: r.type.group, kind: r.type.plural, causes: [{ message }] },
    code,
  });
}

/** The validating stage backed by the stored policies; `authorize` backs the CEL `authorizer`. */
export function policyAdmission(registry: Registry, authorize: Authorizer): ValidatingStage {
  return (r) => {
    const bindings = registry.store.list(BINDINGS) as unknown as ValidatingAdmissionPolicyBinding[];
    if (bindings.length === 0) return;
    const policies = registry.store.list(POLICIES) as unknown as ValidatingAdmissionPolicy[];
    const verdict = evaluateValidatingPolicies({
      policies,
      bindings,
      ...requestInput(registry, r, authorize),
    });
    r.options.warnings?.push(...verdict.warnings);
    const denial = verdict.denial;
    if (!denial) return;
    throw forbiddenByPolicy(r, denial.message, denial.reason, denial.code);
  };
}
