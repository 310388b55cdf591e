// What validating and mutating admission policies share: the CEL variables of one request (`object`,
// `oldObject`, `request`, `namespaceObject`, `authorizer`), which bindings apply (policy
// matchConstraints, then binding matchResources), their params (paramRef by name or selector,
// parameterNotFoundAction), matchConditions and lazily evaluated `variables`.
import { celValue, CelAuthorizer, CelResourceCheck, compile } from './policy-cel.js';
import { matchesResources } from './policy-match.js';
import type {
  AdmissionAttributes,
  Authorizer,
  LabelSelector,
  MatchResources,
  ParamRef,
} from './policy-types.js';

/** Finds param objects of `paramKind`; undefined when that kind is not served. */
export type ParamLookup = (
  paramKind: { readonly apiVersion: string; readonly kind: string },
  where: { readonly namespace: string; readonly name?: string; readonly selector?: LabelSelector },
) => readonly Record<string, unknown>[] | undefined;

/** The request-wide inputs of policy evaluation. */
export type PolicyRequestInput = {
  readonly request: AdmissionAttributes;
  /** The Namespace object of a namespaced request (null or absent otherwise). */
  readonly namespaceObject?: Record<string, unknown> | null;
  readonly params?: ParamLookup;
  /** Backs the CEL `authorizer`; absent, every check answers no-opinion with reason "no authorizer". */
  readonly authorizer?: Authorizer;
};

/** The parts of a policy or binding this module reads. */
export type PolicyShape = {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly failurePolicy?: 'Fail' | 'Ignore';
    readonly paramKind?: { readonly apiVersion: string; readonly kind: string };
    readonly matchConstraints?: MatchResources;
    readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
    readonly variables?: readonly { readonly name: string; readonly expression: string }[];
  };
};
export type BindingShape = {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly policyName: string;
    readonly paramRef?: ParamRef;
    readonly matchResources?: MatchResources;
  };
};

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The CEL `request` variable. */
function requestValue(r: AdmissionAttributes): unknown {
  const u = r.userInfo;
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
    userInfo: { username: u.username, uid: u.uid ?? '', groups: u.groups, extra: u.extra ?? {} },
    dryRun: r.dryRun,
  });
}

/** The CEL variables every expression of this request sees (`params` and `variables` are added per policy). */
export function requestContext(
  input: PolicyRequestInput,
  object = input.request.object,
): Record<string, unknown> {
  const r = input.request;
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
  return {
    object: celValue(object),
    oldObject: celValue(r.oldObject),
    request: requestValue(r),
    namespaceObject: celValue(input.namespaceObject ?? null),
    authorizer,
  };
}

/** The bindings that apply to this request, each with its policy. */
export function applicableBindings<P extends PolicyShape, B extends BindingShape>(
  policies: readonly P[],
  bindings: readonly B[],
  input: PolicyRequestInput,
): { readonly policy: P; readonly binding: B }[] {
  const labels = (input.namespaceObject?.['metadata'] as { labels?: Record<string, string> } | undefined)
    ?.labels;
  const out: { policy: P; binding: B }[] = [];
  for (const binding of bindings) {
    const policy = policies.find((p) => p.metadata.name === binding.spec.policyName);
    const constraints = policy?.spec.matchConstraints;
    if (!policy || !constraints?.resourceRules) continue;
    if (!matchesResources(constraints, input.request, labels)) continue;
    if (!matchesResources(binding.spec.matchResources, input.request, labels)) continue;
    out.push({ policy, binding });
  }
  return out;
}

/** The binding's params (one evaluation each; `[null]` without paramKind), or why none could be had. */
export function resolveParams(
  policy: PolicyShape,
  binding: BindingShape,
  input: PolicyRequestInput,
): readonly (Record<string, unknown> | null)[] | string {
  const kind = policy.spec.paramKind;
  if (kind === undefined) return [null];
  const ref = binding.spec.paramRef;
  if (ref === undefined)
    return `failed to configure binding: no paramRef in binding for policy with paramKind ${kind.kind}`;
  const found = input.params?.(kind, {
    namespace: ref.namespace ?? input.request.namespace,
    ...(ref.name !== undefined ? { name: ref.name } : {}),
    ...(ref.selector !== undefined ? { selector: ref.selector } : {}),
  });
  if (found === undefined)
    return `failed to configure policy: paramKind ${kind.apiVersion}, Kind=${kind.kind} is not served`;
  if (found.length > 0) return found;
  if ((ref.parameterNotFoundAction ?? 'Deny') === 'Allow') return [];
  return 'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction';
}

/**
 * The full context of one policy evaluation (with `params` and lazy `variables`), or what its
 * matchConditions decided instead: `skip` (a condition is false) or an error message.
 */
export function policyContext(
  policy: PolicyShape,
  base: Record<string, unknown>,
  params: Record<string, unknown> | null,
): Record<string, unknown> | 'skip' | { readonly error: string } {
  const variables: Record<string, unknown> = {};
  const context = { ...base, params: celValue(params), variables };
  for (const v of policy.spec.variables ?? []) {
    // Upstream evaluates variables lazily; an erroring variable fails only the expressions that read it.
    let value: { v: unknown } | undefined;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get: () => (value ??= { v: compile(v.expression)(context) }).v,
    });
  }
  for (const condition of policy.spec.matchConditions ?? []) {
    let matched: unknown;
    try {
      matched = compile(condition.expression)(context);
    } catch (e) {
      return { error: `failed to evaluate matchCondition '${condition.name}': ${errorText(e)}` };
    }
    if (matched !== true) return 'skip';
  }
  return context;
}
