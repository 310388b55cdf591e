// The CEL environment of admission policies: the variables `object`, `oldObject`, `request`, `params`,
// `namespaceObject`, `variables` (dynamic) and `authorizer`, with the Kubernetes authorizer library:
// `authorizer.group(g).resource(r).namespace(n).name(x).subresource(s).check(verb)` → Decision
// (`allowed()`, `reason()`, `errored()`, `error()`), `authorizer.path(p).check(verb)`,
// `authorizer.serviceAccount(ns, name)` (the same checks for that ServiceAccount) and
// `authorizer.requestResource` (a check pre-filled with the request's group, resource, subresource,
// namespace and name).
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import type { AuthorizationAttributes, Authorizer, UserInfo } from './policy-types.js';

type Target = {
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
};

/** `authorizer` and `authorizer.serviceAccount(…)`: whose permissions are checked. */
export class CelAuthorizer {
  /** Set for the request's caller: a check of what the request itself does. */
  requestResource: CelResourceCheck | null = null;
  constructor(
    readonly user: UserInfo,
    readonly authorize: Authorizer,
  ) {}
}

/** A resource check being built (`group(…)`, `resource(…)`, …) until `check(verb)`. */
export class CelResourceCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly target: Target,
  ) {}
  with(change: Partial<Target>): CelResourceCheck {
    return new CelResourceCheck(this.authorizer, { ...this.target, ...change });
  }
}

/** A non-resource path check. */
export class CelPathCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly path: string,
  ) {}
}

/** The answer of `check(verb)`. */
export class CelDecision {
  constructor(
    readonly allowed: boolean,
    readonly reason: string,
    readonly error: string,
  ) {}
}

const AUTHORIZER = 'kubernetes.authorization.Authorizer';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const DECISION = 'kubernetes.authorization.Decision';

function decide(authorizer: CelAuthorizer, attributes: Omit<AuthorizationAttributes, 'user'>): CelDecision {
  const d = authorizer.authorize({ ...attributes, user: authorizer.user });
  return new CelDecision(d.decision === 'allow', d.reason, d.error ?? '');
}

function method<T>(
  receiverType: string,
  name: string,
  params: readonly string[],
  returnType: string,
  handler: (receiver: T, ...args: string[]) => unknown,
) {
  return {
    name,
    receiverType,
    returnType,
    params: params.map((type, i) => ({ name: `a${i}`, type })),
    handler,
  };
}

const setter = (field: keyof Target) =>
  method<CelResourceCheck>(RESOURCE_CHECK, field, ['string'], RESOURCE_CHECK, (c, v) =>
    c.with({ [field]: v }),
  );

/** The environment every admission-policy expression is parsed in. */
export const policyEnvironment = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true })
  .registerType(AUTHORIZER, CelAuthorizer)
  .registerType(RESOURCE_CHECK, CelResourceCheck)
  .registerType(PATH_CHECK, CelPathCheck)
  .registerType(DECISION, CelDecision)
  .registerVariable('authorizer', AUTHORIZER)
  .registerFunction(
    method<CelAuthorizer>(AUTHORIZER, 'group', ['string'], RESOURCE_CHECK, (a, group) => {
      return new CelResourceCheck(a, { group, resource: '', subresource: '', namespace: '', name: '' });
    }),
  )
  .registerFunction(
    method<CelAuthorizer>(AUTHORIZER, 'path', ['string'], PATH_CHECK, (a, path) => new CelPathCheck(a, path)),
  )
  .registerFunction(
    method<CelAuthorizer>(AUTHORIZER, 'serviceAccount', ['string', 'string'], AUTHORIZER, (a, ns, name) => {
      const username = `system:serviceaccount:${ns}:${name}`;
      const groups = ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'];
      return new CelAuthorizer({ username, groups }, a.authorize);
    }),
  )
  .registerFunction(setter('resource'))
  .registerFunction(setter('subresource'))
  .registerFunction(setter('namespace'))
  .registerFunction(setter('name'))
  .registerFunction(
    method<CelResourceCheck>(RESOURCE_CHECK, 'check', ['string'], DECISION, (c, verb) =>
      decide(c.authorizer, { verb, resource: c.target }),
    ),
  )
  .registerFunction(
    method<CelPathCheck>(PATH_CHECK, 'check', ['string'], DECISION, (c, verb) =>
      decide(c.authorizer, { verb, path: c.path }),
    ),
  )
  .registerFunction(method<CelDecision>(DECISION, 'allowed', [], 'bool', (d) => d.allowed))
  .registerFunction(method<CelDecision>(DECISION, 'reason', [], 'string', (d) => d.reason))
  .registerFunction(method<CelDecision>(DECISION, 'errored', [], 'bool', (d) => d.error !== ''))
  .registerFunction(method<CelDecision>(DECISION, 'error', [], 'string', (d) => d.error));

const compiled = new Map<string, ParseResult>();

/** Parses an expression once (throws on a syntax error). */
export function compile(expression: string): ParseResult {
  let program = compiled.get(expression);
  if (program === undefined) {
    program = policyEnvironment.parse(expression);
    compiled.set(expression, program);
  }
  return program;
}

/**
 * A JSON value as CEL sees a Kubernetes object: integral numbers are `int`, null fields are unset, lists
 * and maps are built in this realm (jest's vm contexts would otherwise confuse cel-js).
 */
export function celValue(v: unknown): unknown {
  if (Array.isArray(v)) return Array.from(v, celValue);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = celValue(x);
    return out;
  }
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v;
}
