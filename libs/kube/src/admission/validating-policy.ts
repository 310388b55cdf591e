// ValidatingAdmissionPolicy evaluation as the API server's dispatcher does it, without any server: for
// each binding whose policy matches the request (policy matchConstraints, then binding matchResources),
// resolve params (paramRef by name or selector; parameterNotFoundAction), evaluate matchConditions,
// variables and validations in the policy CEL environment, honour failurePolicy for errors, and turn
// failures into the binding's validationActions: Deny (the first one denies the request), Warn (a
// warning), Audit (reported back; the emulator has no audit log).
import { celValue, CelAuthorizer, CelResourceCheck, compile } from './policy-cel.js';
import { matchesResources } from './policy-match.js';
import type {
  AdmissionAttributes,
  Authorizer,
  LabelSelector,
  PolicyValidation,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from './policy-types.js';

/** Finds param objects of `paramKind`; undefined when that kind is not served. */
export type ParamLookup = (
  paramKind: { readonly apiVersion: string; readonly kind: string },
  where: { readonly namespace: string; readonly name?: string; readonly selector?: LabelSelector },
) => readonly Record<string, unknown>[] | undefined;

/** Everything one admission request is judged with. */
export type PolicyEvaluationInput = {
  readonly policies: readonly ValidatingAdmissionPolicy[];
  readonly bindings: readonly ValidatingAdmissionPolicyBinding[];
  readonly request: AdmissionAttributes;
  /** The Namespace object of a namespaced request (null or absent otherwise). */
  readonly namespaceObject?: Record<string, unknown> | null;
  readonly params?: ParamLookup;
  /** Backs the CEL `authorizer`; absent, every check is denied with reason "no authorizer". */
  readonly authorizer?: Authorizer;
};

/** A request refused by a policy: the Status the API server answers is built from it. */
export type PolicyDenial = {
  readonly policy: string;
  readonly binding: string;
  /** `ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: <message>`. */
  readonly message: string;
  /** The validation's reason (default `Invalid`) and its HTTP code. */
  readonly reason: string;
  readonly code: number;
};

/** The outcome: the first denial (if any), warnings for the `Warning` header, audit-only failures. */
export type PolicyVerdict = {
  readonly denial?: PolicyDenial;
  readonly warnings: readonly string[];
  readonly audit: readonly string[];
};

const CODES: Readonly<Record<string, number>> = {
  Unauthorized: 401,
  Forbidden: 403,
  Invalid: 422,
  RequestEntityTooLarge: 413,
};

type Failure = { readonly message: string; readonly reason: string };

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

function failureMessage(v: PolicyValidation, context: Record<string, unknown>): string {
  if (v.messageExpression !== undefined) {
    try {
      const m = compile(v.messageExpression)(context);
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m;
    } catch {
      // Upstream logs the error and falls back to message.
    }
  }
  return v.message ?? `failed expression: ${v.expression}`;
}

/** Evaluates one policy with one param object; returns its failures (empty when admitted or not applicable). */
function evaluatePolicy(
  policy: ValidatingAdmissionPolicy,
  base: Record<string, unknown>,
  fail: boolean,
): Failure[] {
  const variables: Record<string, unknown> = {};
  const context = { ...base, variables };
  for (const condition of policy.spec.matchConditions ?? []) {
    let matched: unknown;
    try {
      matched = compile(condition.expression)(context);
    } catch (e) {
      if (!fail) return [];
      return [
        {
          message: `failed to evaluate matchCondition '${condition.name}': ${errorText(e)}`,
          reason: 'Invalid',
        },
      ];
    }
    if (matched !== true) return [];
  }
  for (const v of policy.spec.variables ?? []) {
    // Upstream evaluates variables lazily; an erroring variable fails only the expressions that read it.
    let value: { v: unknown } | undefined;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get: () => (value ??= { v: compile(v.expression)(context) }).v,
    });
  }
  const failures: Failure[] = [];
  for (const v of policy.spec.validations ?? []) {
    let result: unknown;
    try {
      result = compile(v.expression)(context);
    } catch (e) {
      if (fail)
        failures.push({
          message: `expression '${v.expression}' resulted in error: ${errorText(e)}`,
          reason: 'Invalid',
        });
      continue;
    }
    if (result !== true)
      failures.push({ message: failureMessage(v, context), reason: v.reason ?? 'Invalid' });
  }
  return failures;
}

function namespaceLabels(ns: Record<string, unknown> | null | undefined): Record<string, string> | undefined {
  return (ns?.['metadata'] as { labels?: Record<string, string> } | undefined)?.labels;
}

/** The CEL `request` variable. */
function requestValue(r: AdmissionAttributes): unknown {
  return celValue({
    operation: r.operation,
    kind: r.kind,
    resource: r.resource,
    subResource: r.subResource,
    requestKind: r.kind,
    requestResource: r.resource,
    requestSubResource: r.subResource,
    name: r.name,
    namespace: r.namespace,
    userInfo: {
      username: r.userInfo.username,
      uid: r.userInfo.uid ?? '',
      groups: r.userInfo.groups,
      extra: r.userInfo.extra ?? {},
    },
    dryRun: r.dryRun,
  });
}

/** Resolves the binding's params: a list to evaluate against, or a failure message. */
function resolveParams(
  policy: ValidatingAdmissionPolicy,
  binding: ValidatingAdmissionPolicyBinding,
  input: PolicyEvaluationInput,
): readonly (Record<string, unknown> | null)[] | string {
  const kind = policy.spec.paramKind;
  if (kind === undefined) return [null];
  const ref = binding.spec.paramRef;
  if (ref === undefined)
    return `failed to configure binding: no paramRef in binding for policy with paramKind ${kind.kind}`;
  const namespace = ref.namespace ?? input.request.namespace;
  const found = input.params?.(kind, {
    namespace,
    ...(ref.name !== undefined ? { name: ref.name } : {}),
    ...(ref.selector !== undefined ? { selector: ref.selector } : {}),
  });
  if (found === undefined)
    return `failed to configure policy: paramKind ${kind.apiVersion}, Kind=${kind.kind} is not served`;
  if (found.length > 0) return found;
  if ((ref.parameterNotFoundAction ?? 'Deny') === 'Allow') return [];
  return 'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction';
}

/** Judges one admission request against every ValidatingAdmissionPolicy and binding. */
export function evaluateValidatingPolicies(input: PolicyEvaluationInput): PolicyVerdict {
  const r = input.request;
  const warnings: string[] = [];
  const audit: string[] = [];
  const authorize: Authorizer =
    input.authorizer ?? (() => ({ decision: 'no-opinion', reason: 'no authorizer' }));
  const authorizer = new CelAuthorizer(r.userInfo, authorize);
  authorizer.requestResource = new CelResourceCheck(authorizer, {
    group: r.resource.group,
    resource: r.resource.resource,
    subresource: r.subResource,
    namespace: r.namespace,
    name: r.name,
  });
  const base = {
    object: celValue(r.object),
    oldObject: celValue(r.oldObject),
    request: requestValue(r),
    namespaceObject: celValue(input.namespaceObject ?? null),
    authorizer,
  };
  const labels = namespaceLabels(input.namespaceObject);
  for (const binding of input.bindings) {
    const policy = input.policies.find((p) => p.metadata.name === binding.spec.policyName);
    if (!policy) continue;
    const constraints = policy.spec.matchConstraints;
    if (!constraints?.resourceRules || !matchesResources(constraints, r, labels)) continue;
    if (!matchesResources(binding.spec.matchResources, r, labels)) continue;
    const fail = (policy.spec.failurePolicy ?? 'Fail') === 'Fail';
    const params = resolveParams(policy, binding, input);
    const failures: Failure[] =
      typeof params === 'string'
        ? fail
          ? [{ message: params, reason: 'Invalid' }]
          : []
        : params.flatMap((p) => evaluatePolicy(policy, { ...base, params: celValue(p) }, fail));
    const actions = binding.spec.validationActions ?? ['Deny'];
    const p = policy.metadata.name;
    const b = binding.metadata.name;
    for (const f of failures) {
      if (actions.includes('Warn'))
        warnings.push(
          `Validation failed for ValidatingAdmissionPolicy '${p}' with binding '${b}': ${f.message}`,
        );
      if (actions.includes('Audit')) audit.push(`${p}/${b}: ${f.message}`);
      if (actions.includes('Deny')) {
        const message = `ValidatingAdmissionPolicy '${p}' with binding '${b}' denied request: ${f.message}`;
        const reason = f.reason || 'Invalid';
        return {
          denial: { policy: p, binding: b, message, reason, code: CODES[reason] ?? 422 },
          warnings,
          audit,
        };
      }
    }
  }
  return { warnings, audit };
}
