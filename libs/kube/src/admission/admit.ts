// The admission engine: what kube-apiserver does to a custom resource write before storing it.
// Status-subresource field resets, pruning, defaulting, structural validation, then CEL rules (with oldSelf on UPDATE).
import type { ValidateFunction } from 'ajv';
import type { Kind } from '../constants.js';
import { buildCrd, type CustomResourceDefinition, type JsonSchema } from '../crds/crd-definitions.js';
import { compileRules, evaluateRules, type CompiledRules } from './cel-rules.js';
import { invalidStatus, type FieldError, type KubeStatus } from './field-errors.js';
import { isJsonObject, pruneAndDefault, type JsonObject } from './prune-defaults.js';
import { compileStructural, validateStructural } from './structural.js';

/** A CRD prepared for admission: schema compiled by ajv, CEL rules parsed. Built once per CRD object. */
export interface CompiledCrd {
  readonly crd: CustomResourceDefinition;
  readonly kind: string;
  readonly schema: JsonSchema;
  readonly hasStatusSubresource: boolean;
  readonly validate: ValidateFunction;
  readonly rules: CompiledRules;
}

/** One admission request. Give either `crd` (e.g. loaded from deploy/crds) or `kind` (built-in CRDs). */
export interface AdmitRequest {
  readonly crd?: CustomResourceDefinition;
  readonly kind?: Kind;
  readonly operation: 'CREATE' | 'UPDATE';
  /** The object as the client sent it (after the caller applied any patch to the stored object). */
  readonly object: unknown;
  /** The stored object; required for UPDATE. */
  readonly oldObject?: unknown;
  /** `status` for writes to the /status subresource. */
  readonly subresource?: 'status';
}

/** The outcome: the object to store (pruned and defaulted), or the field errors and the 422 Status. */
export type AdmitResult =
  | { readonly allowed: true; readonly object: JsonObject }
  | { readonly allowed: false; readonly errors: readonly FieldError[]; readonly status: KubeStatus };

const byCrd = new WeakMap<CustomResourceDefinition, CompiledCrd>();
const byKind = new Map<Kind, CompiledCrd>();

/** Compiles (or returns the cached compilation of) a CRD's first served version. */
export function compileCrd(crd: CustomResourceDefinition): CompiledCrd {
  const cached = byCrd.get(crd);
  if (cached !== undefined) return cached;
  const version = crd.spec.versions.find((v) => v.served) ?? crd.spec.versions[0];
  if (version === undefined) throw new Error(`CRD ${crd.metadata.name} has no versions`);
  const schema = version.schema.openAPIV3Schema;
  const compiled: CompiledCrd = {
    crd,
    kind: crd.spec.names.kind,
    schema,
    hasStatusSubresource: version.subresources?.status !== undefined,
    validate: compileStructural(schema),
    rules: compileRules(schema),
  };
  byCrd.set(crd, compiled);
  return compiled;
}

/** The compiled built-in CRD of a kind (the same definition deploy/crds is generated from). */
export function compiledCrdOf(kind: Kind): CompiledCrd {
  let c = byKind.get(kind);
  if (c === undefined) {
    c = compileCrd(buildCrd(kind));
    byKind.set(kind, c);
  }
  return c;
}

/**
 * Admits a CREATE or UPDATE the way kube-apiserver does for these CRDs:
 * 1. status subresource semantics: CREATE drops `status`; a main-resource UPDATE keeps the stored status;
 *    a /status UPDATE keeps everything but `status` from the stored object;
 * 2. prunes unknown fields and non-nullable nulls, applies schema defaults (to the old object too);
 * 3. validates the structural schema; 4. evaluates x-kubernetes-validations, transition rules only on UPDATE
 *    where an old value exists at the rule's path. CEL is skipped when a type error makes it meaningless.
 * Generation, resourceVersion and metadata bookkeeping stay with the caller (the API emulator).
 */
export function admit(req: AdmitRequest): AdmitResult {
  const compiled = resolve(req);
  const name = metadataName(req.object) ?? metadataName(req.oldObject) ?? '';
  const fail = (errors: readonly FieldError[]): AdmitResult => ({
    allowed: false,
    errors,
    status: invalidStatus(compiled.kind, name, errors),
  });
  if (!isJsonObject(req.object)) {
    return fail([
      {
        type: 'FieldValueInvalid',
        field: '',
        badValue: { kind: 'raw', value: typeof req.object },
        detail: 'object expected',
      },
    ]);
  }
  if (req.operation === 'UPDATE' && !isJsonObject(req.oldObject)) {
    throw new Error('admit: UPDATE needs the stored oldObject');
  }
  const incoming = applySubresource(compiled, req);
  const object = pruneAndDefault(compiled.schema, incoming) as JsonObject;
  const old =
    req.operation === 'UPDATE' ? (pruneAndDefault(compiled.schema, req.oldObject) as JsonObject) : undefined;

  const errors: FieldError[] = [...metadataErrors(req.operation, object)];
  const structural = validateStructural(compiled.validate, compiled.schema, object);
  errors.push(...structural);
  if (!structural.some((e) => e.type === 'FieldValueTypeInvalid')) {
    evaluateRules(compiled.rules, compiled.schema, object, old, '', errors);
  }
  return errors.length === 0 ? { allowed: true, object } : fail(errors);
}

function resolve(req: AdmitRequest): CompiledCrd {
  if (req.crd !== undefined) return compileCrd(req.crd);
  if (req.kind !== undefined) return compiledCrdOf(req.kind);
  throw new Error('admit: give crd or kind');
}

function applySubresource(c: CompiledCrd, req: AdmitRequest): JsonObject {
  const obj = structuredClone(req.object) as JsonObject;
  if (!c.hasStatusSubresource) return obj;
  const old = isJsonObject(req.oldObject) ? req.oldObject : undefined;
  if (req.operation === 'CREATE') {
    delete obj['status'];
    return obj;
  }
  if (req.subresource === 'status') {
    const next = structuredClone(old ?? {}) as JsonObject;
    if ('status' in obj) next['status'] = obj['status'];
    else delete next['status'];
    return next;
  }
  if (old !== undefined && 'status' in old) obj['status'] = structuredClone(old['status']);
  else delete obj['status'];
  return obj;
}

function metadataName(o: unknown): string | undefined {
  if (!isJsonObject(o) || !isJsonObject(o['metadata'])) return undefined;
  const n = o['metadata']['name'];
  return typeof n === 'string' ? n : undefined;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** ObjectMeta checks this engine owns: a name (or generateName) on create, shaped as a DNS subdomain. */
function metadataErrors(op: AdmitRequest['operation'], obj: JsonObject): FieldError[] {
  const meta = obj['metadata'];
  const m = isJsonObject(meta) ? meta : {};
  const name = m['name'];
  if (op !== 'CREATE') return [];
  if (typeof name !== 'string') {
    return typeof m['generateName'] === 'string'
      ? []
      : [{ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' }];
  }
  const errors: FieldError[] = [];
  if (name.length > 253) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.name',
      badValue: { kind: 'string', value: name },
      detail: 'must be no more than 253 characters',
    });
  }
  if (!DNS1123_SUBDOMAIN.test(name)) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata.name',
      badValue: { kind: 'string', value: name },
      detail: DNS1123_MESSAGE,
    });
  }
  return errors;
}
