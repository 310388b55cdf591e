// Structural validation of a pruned, defaulted resource: ajv for the OpenAPI keywords, plus the list-type
// uniqueness ajv cannot express. Errors are translated into kube-apiserver's field paths and wording.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { JsonSchema } from '../crds/crd-definitions.js';
import { childPath, goMapLiteral, indexPath, type FieldError } from './field-errors.js';
import { isJsonObject } from './prune-defaults.js';

const INT32 = 2 ** 31;

/** One ajv instance: the x-kubernetes-* keywords are annotations, int32/int64 are integer formats. */
function makeAjv(): Ajv {
  // optimize: false halves compile time of these large schemas (matters to short-lived CLI runs).
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictTypes: false,
    validateFormats: true,
    code: { optimize: false },
  });
  for (const keyword of [
    'x-kubernetes-validations',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-map-type',
    'x-kubernetes-int-or-string',
    'x-kubernetes-embedded-resource',
  ]) {
    ajv.addKeyword({ keyword });
  }
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  return ajv;
}

let shared: Ajv | undefined;

/** Compiles a root schema once; the caller caches the result per CRD. */
export function compileStructural(schema: JsonSchema): ValidateFunction {
  shared ??= makeAjv();
  return shared.compile(nullableEnums(schema) as JsonSchema);
}

/** OpenAPI `nullable` admits null even under `enum`; ajv needs null listed explicitly. */
function nullableEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableEnums);
  if (!isJsonObject(node)) return node;
  const out = Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === 'enum' || k === 'default' ? v : nullableEnums(v)]),
  );
  if (node['nullable'] === true && Array.isArray(node['enum'])) out['enum'] = [...node['enum'], null];
  return out;
}

/** Validates `value` and returns API-server-shaped errors (empty when valid). */
export function validateStructural(
  validate: ValidateFunction,
  schema: JsonSchema,
  value: unknown,
): FieldError[] {
  const errors: FieldError[] = [];
  if (!validate(value)) {
    for (const e of validate.errors ?? []) {
      const fe = translate(e, schema, value);
      if (fe !== undefined) errors.push(fe);
    }
  }
  checkListTypes(schema, value, '', errors);
  // A wrong type makes every other complaint about the same field noise (ajv also reports enum on null).
  const typeErrors = new Set(errors.filter((e) => e.type === 'FieldValueTypeInvalid').map((e) => e.field));
  return dedupe(errors.filter((e) => e.type === 'FieldValueTypeInvalid' || !typeErrors.has(e.field)));
}

/** Walks a JSON pointer through schema and value, producing `spec.roles[0].name`-style paths. */
function locate(
  pointer: string,
  root: JsonSchema,
  value: unknown,
): { path: string; schema: JsonSchema; value: unknown } {
  let schema = root;
  let current = value;
  let path = '';
  const segments =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (const seg of segments) {
    if (schema.type === 'array' || Array.isArray(current)) {
      path = indexPath(path, seg);
      schema = schema.items ?? {};
    } else if (schema.properties?.[seg] !== undefined) {
      path = childPath(path, seg);
      schema = schema.properties[seg] ?? {};
    } else {
      path = indexPath(path, seg);
      schema = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {};
    }
    current = Array.isArray(current)
      ? current[Number(seg)]
      : isJsonObject(current)
        ? current[seg]
        : undefined;
  }
  return { path, schema, value: current };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function printable(v: unknown): FieldError['badValue'] {
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (typeof v === 'number') return { kind: 'number', value: v };
  return { kind: 'raw', value: JSON.stringify(v) };
}

function translate(e: ErrorObject, root: JsonSchema, value: unknown): FieldError | undefined {
  const at = locate(e.instancePath, root, value);
  const p = at.path;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return {
        type: 'FieldValueRequired',
        field: childPath(p, String(params['missingProperty'])),
        detail: '',
      };
    case 'type': {
      const actual = typeName(at.value);
      return {
        type: 'FieldValueTypeInvalid',
        field: p,
        badValue: { kind: 'string', value: actual },
        detail: `${p} in body must be of type ${String(params['type'])}: "${actual}"`,
      };
    }
    case 'enum': {
      const allowed = (at.schema.enum ?? []).map((x) => JSON.stringify(x)).join(', ');
      return {
        type: 'FieldValueNotSupported',
        field: p,
        badValue: printable(at.value),
        detail: `supported values: ${allowed}`,
      };
    }
    case 'pattern':
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: printable(at.value),
        detail: `${p} in body should match '${String(params['pattern'])}'`,
      };
    case 'minLength':
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: printable(at.value),
        detail: `${p} in body should be at least ${String(params['limit'])} chars long`,
      };
    case 'maxLength':
      return {
        type: 'FieldValueTooLong',
        field: p,
        detail: `may not be more than ${String(params['limit'])} bytes`,
      };
    case 'maxItems':
    case 'maxProperties': {
      const count = Array.isArray(at.value)
        ? at.value.length
        : isJsonObject(at.value)
          ? Object.keys(at.value).length
          : 0;
      return {
        type: 'FieldValueTooMany',
        field: p,
        badValue: { kind: 'number', value: count },
        detail: `must have at most ${String(params['limit'])} items`,
      };
    }
    case 'minItems':
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: { kind: 'number', value: Array.isArray(at.value) ? at.value.length : 0 },
        detail: `${p} in body should have at least ${String(params['limit'])} items`,
      };
    case 'minimum':
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: printable(at.value),
        detail: `${p} in body should be greater than or equal to ${String(params['limit'])}`,
      };
    case 'maximum':
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: printable(at.value),
        detail: `${p} in body should be less than or equal to ${String(params['limit'])}`,
      };
    case 'format':
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: printable(at.value),
        detail: `${p} in body must be of type ${String(params['format'])}: ${JSON.stringify(String(at.value))}`,
      };
    default:
      return {
        type: 'FieldValueInvalid',
        field: p,
        badValue: printable(at.value),
        detail: e.message ?? e.keyword,
      };
  }
}

/** Enforces x-kubernetes-list-type map (unique keys) and set (unique items). */
function checkListTypes(schema: JsonSchema, value: unknown, path: string, out: FieldError[]): void {
  if (Array.isArray(value)) {
    const listType = schema['x-kubernetes-list-type'];
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    value.forEach((item, i) => {
      if (listType === 'map' && isJsonObject(item)) {
        const tuple = keys.map((k) => [k, item[k]] as const);
        const id = JSON.stringify(tuple);
        if (seen.has(id))
          out.push({
            type: 'FieldValueDuplicate',
            field: indexPath(path, i),
            badValue: { kind: 'raw', value: goMapLiteral(tuple) },
            detail: '',
          });
        seen.add(id);
      } else if (listType === 'set') {
        const id = JSON.stringify(item);
        if (seen.has(id))
          out.push({
            type: 'FieldValueDuplicate',
            field: indexPath(path, i),
            badValue: printable(item),
            detail: '',
          });
        seen.add(id);
      }
      if (schema.items !== undefined) checkListTypes(schema.items, item, indexPath(path, i), out);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    const prop = schema.properties?.[key];
    if (prop !== undefined) checkListTypes(prop, v, childPath(path, key), out);
    else if (typeof schema.additionalProperties === 'object')
      checkListTypes(schema.additionalProperties, v, indexPath(path, key), out);
  }
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const id = JSON.stringify(e);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
