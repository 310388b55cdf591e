// Evaluates the admission policies under deploy/ as the API server would, for their unit tests. Validating
// policies go through @rolepolicy/kube's evaluateValidatingPolicies (the API emulator's), with the policy's
// own binding from the YAML turned to Warn so that every failing validation is reported, its `params` and
// an `authorizer` the test answers. Mutating policies' JSONPatch mutations (which that evaluator does not
// do) are evaluated here: resource rules, matchConditions, lazy variables, `params`; cel-js has no message
// literals, so `JSONPatch{...}` is read as a map.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Environment } from '@marcbachmann/cel-js';
import {
  evaluateValidatingPolicies,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@rolepolicy/kube';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './render.js';

type Rule = {
  readonly apiGroups: readonly string[];
  readonly operations: readonly string[];
  readonly resources: readonly string[];
};
type Named = { readonly name: string; readonly expression: string };
type Validation = {
  readonly expression: string;
  readonly message?: string;
  readonly messageExpression?: string;
};
type Mutation = { readonly patchType: string; readonly jsonPatch: { readonly expression: string } };

/** A ValidatingAdmissionPolicy or MutatingAdmissionPolicy as the YAML has it. */
export type AdmissionPolicy = {
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly matchConstraints: { readonly resourceRules: readonly Rule[] };
    readonly matchConditions?: readonly Named[];
    readonly variables?: readonly Named[];
    readonly validations?: readonly Validation[];
    readonly mutations?: readonly Mutation[];
  };
};

/** Who asks: `request.userInfo`. */
export type Caller = {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
};

/** One authorizer question, as the policy asked it. */
export type AuthzCheck = {
  readonly group?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly verb: string;
};

/** One admission request. `resource` is the plural, `subResource` e.g. `status`. */
export type AdmissionRequest = {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  readonly group: string;
  readonly resource: string;
  readonly subResource?: string;
  readonly namespace: string;
  readonly name: string;
  readonly caller: Caller;
  readonly object: unknown;
  readonly oldObject: unknown;
  readonly params: unknown;
  /** The RBAC answer to each `authorizer` check of the caller (default: nothing allowed). */
  readonly allowed?: (check: AuthzCheck, caller: Caller) => boolean;
};

type Binding = { readonly kind: string; readonly spec: { readonly policyName: string } };

/** The bindings of each file read by {@link loadPolicies}, by policy name. */
const bindingsOf = new Map<string, Binding>();

/** Every policy of a YAML file under the repository root, by name (their bindings are kept for {@link denials}). */
export function loadPolicies(file: string): Map<string, AdmissionPolicy> {
  const docs = parseAllDocuments(readFileSync(path.join(REPO_ROOT, file), 'utf8'));
  const out = new Map<string, AdmissionPolicy>();
  for (const doc of docs) {
    const value = doc.toJS() as (AdmissionPolicy & Binding) | null;
    if (value && /AdmissionPolicy$/.test(value.kind)) out.set(value.metadata.name, value);
    if (value && /AdmissionPolicyBinding$/.test(value.kind)) bindingsOf.set(value.spec.policyName, value);
  }
  return out;
}

class Authz {
  constructor(
    readonly ask: (check: AuthzCheck) => boolean,
    readonly parts: Omit<AuthzCheck, 'verb'> = {},
  ) {}
}
class AuthzDecision {
  constructor(readonly ok: boolean) {}
}

const env = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false })
  .registerType('Authz', { ctor: Authz, fields: {} })
  .registerType('AuthzDecision', { ctor: AuthzDecision, fields: {} });
for (const part of ['group', 'resource', 'subresource', 'namespace', 'name'] as const) {
  env.registerFunction({
    name: part,
    receiverType: 'Authz',
    returnType: 'Authz',
    params: [{ name: 'value', type: 'string' }],
    handler: (a: Authz, value: string) => new Authz(a.ask, { ...a.parts, [part]: value }),
  });
}
env.registerFunction({
  name: 'check',
  receiverType: 'Authz',
  returnType: 'AuthzDecision',
  params: [{ name: 'verb', type: 'string' }],
  handler: (a: Authz, verb: string) => new AuthzDecision(a.ask({ ...a.parts, verb })),
});
env.registerFunction({
  name: 'allowed',
  receiverType: 'AuthzDecision',
  returnType: 'bool',
  params: [],
  handler: (d: AuthzDecision) => d.ok,
});

/** `JSONPatch{op: a, path: b, value: c}` as the map literal `{'op': a, 'path': b, 'value': c}`. */
function withoutMessageLiterals(expression: string): string {
  let out = '';
  let i = 0;
  while (i < expression.length) {
    const at = expression.indexOf('JSONPatch{', i);
    if (at === -1) return out + expression.slice(i);
    out += `${expression.slice(i, at)}{`;
    i = at + 'JSONPatch{'.length;
    let depth = 1;
    let quote: string | undefined;
    let field = true;
    while (i < expression.length && depth > 0) {
      const name = depth === 1 && field && !quote ? /^\s*([A-Za-z_]\w*)\s*:/.exec(expression.slice(i)) : null;
      if (name) {
        out += ` '${name[1]}':`;
        i += name[0].length;
        field = false;
        continue;
      }
      const c = expression.charAt(i);
      i += 1;
      out += c;
      if (quote) {
        if (c === quote && expression.charAt(i - 2) !== '\\') quote = undefined;
        continue;
      }
      if (c === "'" || c === '"') quote = c;
      else if ('{[('.includes(c)) depth++;
      else if ('}])'.includes(c)) depth--;
      else if (depth === 1 && c === ',') field = true;
    }
  }
  return out;
}

function evaluate(expression: string, context: Record<string, unknown>): unknown {
  return env.parse(withoutMessageLiterals(expression))(context);
}

function matches(policy: AdmissionPolicy, req: AdmissionRequest): boolean {
  const resource = req.subResource ? `${req.resource}/${req.subResource}` : req.resource;
  return policy.spec.matchConstraints.resourceRules.some(
    (r) =>
      (r.apiGroups.includes('*') || r.apiGroups.includes(req.group)) &&
      (r.operations.includes('*') || r.operations.includes(req.operation)) &&
      (r.resources.includes('*') || r.resources.includes(resource)),
  );
}

/** The CEL activation of a request: request, object, oldObject, params, authorizer and lazy variables. */
function activation(policy: AdmissionPolicy, req: AdmissionRequest): Record<string, unknown> {
  const request = {
    operation: req.operation,
    namespace: req.namespace,
    name: req.name,
    subResource: req.subResource ?? '',
    resource: { group: req.group, version: 'v1alpha1', resource: req.resource },
    userInfo: {
      username: req.caller.username,
      uid: req.caller.uid ?? '',
      groups: [...(req.caller.groups ?? [])],
    },
  };
  const variables: Record<string, unknown> = {};
  const context: Record<string, unknown> = {
    request,
    object: req.object,
    oldObject: req.oldObject,
    params: req.params,
    authorizer: new Authz((check) => req.allowed?.(check, req.caller) ?? false),
    variables,
  };
  for (const v of policy.spec.variables ?? []) {
    let cached: { value: unknown } | undefined;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get() {
        cached ??= { value: evaluate(v.expression, context) };
        return cached.value;
      },
    });
  }
  return context;
}

/**
 * The messages of the validations that refuse the request ([] when admitted or not matched), as the API
 * server's evaluator reports them. An expression that fails to evaluate refuses, as `failurePolicy: Fail`
 * does.
 */
export function denials(policy: AdmissionPolicy, req: AdmissionRequest): string[] {
  const binding = bindingsOf.get(policy.metadata.name) as unknown as ValidatingAdmissionPolicyBinding;
  if (binding === undefined) throw new Error(`no binding of ${policy.metadata.name} was loaded`);
  const userInfo = {
    username: req.caller.username,
    uid: req.caller.uid ?? '',
    groups: [...(req.caller.groups ?? [])],
  };
  const verdict = evaluateValidatingPolicies({
    policies: [policy as unknown as ValidatingAdmissionPolicy],
    bindings: [{ ...binding, spec: { ...binding.spec, validationActions: ['Warn'] } }],
    request: {
      operation: req.operation,
      kind: { group: req.group, version: req.group === '' ? 'v1' : 'v1alpha1', kind: '' },
      resource: { group: req.group, version: req.group === '' ? 'v1' : 'v1alpha1', resource: req.resource },
      subResource: req.subResource ?? '',
      name: req.name,
      namespace: req.namespace,
      userInfo,
      dryRun: false,
      object: req.object as Record<string, unknown> | null,
      oldObject: req.oldObject as Record<string, unknown> | null,
    },
    params: () => (req.params === null ? [] : [req.params as Record<string, unknown>]),
    authorizer: (attributes) => {
      const r = attributes.resource;
      const check: AuthzCheck = {
        ...(r?.group !== undefined ? { group: r.group } : {}),
        ...(r?.resource !== undefined ? { resource: r.resource } : {}),
        ...(r?.namespace !== undefined ? { namespace: r.namespace } : {}),
        ...(r?.name !== undefined ? { name: r.name } : {}),
        verb: attributes.verb,
      };
      const allowed = req.allowed?.(check, req.caller) ?? false;
      return { decision: allowed ? 'allow' : 'no-opinion', reason: allowed ? 'test' : 'not granted' };
    },
  });
  return verdict.warnings.map((w) => w.replace(/^Validation failed for .*?: /, ''));
}

/** The JSON patch operations a MutatingAdmissionPolicy makes of the request ([] when not matched). */
export function mutations(policy: AdmissionPolicy, req: AdmissionRequest): Record<string, unknown>[] {
  if (!matches(policy, req)) return [];
  const context = activation(policy, req);
  if (!(policy.spec.matchConditions ?? []).every((c) => evaluate(c.expression, context) === true)) return [];
  return (policy.spec.mutations ?? []).flatMap(
    (m) => evaluate(m.jsonPatch.expression, context) as Record<string, unknown>[],
  );
}
