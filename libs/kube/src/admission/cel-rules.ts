// x-kubernetes-validations: compiles each CEL rule once per CRD and evaluates it at its schema location.
// Transition rules (those reading oldSelf) run only when an old value correlates at that path, as on the API server.
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import type { JsonSchema } from '../crds/crd-definitions.js';
import { childPath, indexPath, type FieldError, type FieldErrorType } from './field-errors.js';
import { isJsonObject } from './prune-defaults.js';

/** A rule parsed once, with what the evaluator needs to know about it. */
interface CompiledRule {
  readonly rule: string;
  readonly program: ParseResult;
  readonly messageProgram?: ParseResult;
  readonly message?: string;
  readonly transition: boolean;
  readonly reason: FieldErrorType;
  readonly fieldPath?: string;
}

/** Compiled rules of one CRD, keyed by the schema node that declares them. */
export type CompiledRules = WeakMap<JsonSchema, readonly CompiledRule[]>;

const env = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true });

const REASONS: ReadonlySet<string> = new Set([
  'FieldValueInvalid',
  'FieldValueForbidden',
  'FieldValueRequired',
  'FieldValueDuplicate',
]);

/** Parses every rule below `root`; a rule that does not parse makes the CRD itself invalid (throws). */
export function compileRules(root: JsonSchema): CompiledRules {
  const out: CompiledRules = new WeakMap();
  const visit = (node: JsonSchema): void => {
    const rules = node['x-kubernetes-validations'];
    if (rules !== undefined) {
      out.set(
        node,
        rules.map((r) => {
          const reason =
            r.reason !== undefined && REASONS.has(r.reason)
              ? (r.reason as FieldErrorType)
              : 'FieldValueInvalid';
          return {
            rule: r.rule,
            program: env.parse(r.rule),
            ...(r.messageExpression !== undefined ? { messageProgram: env.parse(r.messageExpression) } : {}),
            ...(r.message !== undefined ? { message: r.message } : {}),
            transition: /\boldSelf\b/.test(r.rule),
            reason,
            ...(r.fieldPath !== undefined ? { fieldPath: r.fieldPath } : {}),
          };
        }),
      );
    }
    for (const child of Object.values(node.properties ?? {})) visit(child);
    if (typeof node.additionalProperties === 'object') visit(node.additionalProperties);
    if (node.items !== undefined) visit(node.items);
  };
  visit(root);
  return out;
}

/**
 * Converts a JSON value into what cel-js evaluates as Kubernetes does: `type: integer` becomes int (BigInt),
 * null-valued fields read as unset, and map/set lists compare without regard to order.
 */
export function toCelValue(schema: JsonSchema | undefined, v: unknown): unknown {
  if (Array.isArray(v)) {
    // Array.from builds the list in this realm (jest runs tests in a vm context; cel-js checks the realm).
    const items = Array.from(v, (x: unknown) => toCelValue(schema?.items, x));
    const listType = schema?.['x-kubernetes-list-type'];
    if (listType === 'map' || listType === 'set') {
      const keyOf = (x: unknown): string =>
        listType === 'map' && isJsonObject(x)
          ? JSON.stringify(
              (schema?.['x-kubernetes-list-map-keys'] ?? []).map((k) => x[k]),
              bigintSafe,
            )
          : JSON.stringify(x, bigintSafe);
      return items
        .map((x) => [keyOf(x), x] as const)
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map((e) => e[1]);
    }
    return items;
  }
  if (isJsonObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null) continue;
      const child =
        schema?.properties?.[k] ??
        (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      out[k] = toCelValue(child, x);
    }
    return out;
  }
  if (typeof v === 'number' && schema?.type === 'integer' && Number.isInteger(v)) return BigInt(v);
  return v;
}

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Evaluates all rules under `schema` for `value` (and `old`, on UPDATE), appending failures to `out`. */
export function evaluateRules(
  rules: CompiledRules,
  schema: JsonSchema,
  value: unknown,
  old: unknown,
  path: string,
  out: FieldError[],
): void {
  if (value === undefined || value === null) return;
  const oldValue = old === null ? undefined : old;
  const own = rules.get(schema);
  if (own !== undefined) {
    const self = toCelValue(schema, value);
    const oldSelf = oldValue === undefined ? undefined : toCelValue(schema, oldValue);
    for (const r of own) {
      if (r.transition && oldSelf === undefined) continue;
      const failure = runRule(r, self, oldSelf);
      if (failure !== undefined) {
        out.push({
          type: r.reason,
          field: withFieldPath(path, r.fieldPath),
          ...(r.reason === 'FieldValueInvalid' || r.reason === 'FieldValueDuplicate'
            ? { badValue: { kind: 'string' as const, value: schema.type ?? 'object' } }
            : {}),
          detail: failure,
        });
      }
    }
  }
  if (Array.isArray(value)) {
    const item = schema.items;
    if (item === undefined) return;
    const correlate = correlator(schema, Array.isArray(oldValue) ? oldValue : undefined);
    value.forEach((v, i) => evaluateRules(rules, item, v, correlate(v), indexPath(path, i), out));
    return;
  }
  if (!isJsonObject(value)) return;
  const oldObj = isJsonObject(oldValue) ? oldValue : undefined;
  for (const [k, v] of Object.entries(value)) {
    const prop = schema.properties?.[k];
    if (prop !== undefined) evaluateRules(rules, prop, v, oldObj?.[k], childPath(path, k), out);
    else if (typeof schema.additionalProperties === 'object')
      evaluateRules(rules, schema.additionalProperties, v, oldObj?.[k], indexPath(path, k), out);
  }
}

/** Returns the failure detail, or undefined when the rule holds. */
function runRule(r: CompiledRule, self: unknown, oldSelf: unknown): string | undefined {
  const ctx: Record<string, unknown> = r.transition ? { self, oldSelf } : { self };
  let result: unknown;
  try {
    result = r.program(ctx);
  } catch (err) {
    return `rule evaluation error: ${r.rule}: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (result === true) return undefined;
  if (r.messageProgram !== undefined) {
    try {
      const m: unknown = r.messageProgram(ctx);
      if (typeof m === 'string' && m.length > 0) return m;
    } catch {
      // The API server falls back to the static message when messageExpression fails.
    }
  }
  return r.message ?? `failed rule: ${r.rule}`;
}

/** Old-item lookup for list items: by key for list-type map, by value for set, none for atomic lists. */
function correlator(schema: JsonSchema, old: readonly unknown[] | undefined): (item: unknown) => unknown {
  const listType = schema['x-kubernetes-list-type'];
  if (old === undefined || (listType !== 'map' && listType !== 'set')) return () => undefined;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const id = (x: unknown): string =>
    listType === 'map' && isJsonObject(x) ? JSON.stringify(keys.map((k) => x[k])) : JSON.stringify(x);
  const byId = new Map(old.map((o) => [id(o), o] as const));
  return (item) => byId.get(id(item));
}

function withFieldPath(path: string, fieldPath: string | undefined): string {
  if (fieldPath === undefined || fieldPath.length === 0) return path;
  if (path.length === 0) return fieldPath.startsWith('.') ? fieldPath.slice(1) : fieldPath;
  return fieldPath.startsWith('.') || fieldPath.startsWith('[')
    ? `${path}${fieldPath}`
    : `${path}.${fieldPath}`;
}
