// Small TypeBox helpers that emit Kubernetes structural-schema fragments (nullable, maps, list-maps, CEL rules).
// Each helper keeps the TypeScript type and the OpenAPI node in one place so the CRD YAML and the types cannot drift.
import { Type, type Static, type TSchema, type TArray, type TString, type TUnsafe } from '@sinclair/typebox';

/** One `x-kubernetes-validations` entry, exactly as the API server reads it. */
export interface CelRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?:
    'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

/** Options accepted by {@link Str}: string bounds plus free-form OpenAPI keywords (pattern, default, format). */
export interface StrOptions {
  readonly min?: number;
  readonly max?: number;
  readonly pattern?: string;
  readonly default?: string;
  readonly description?: string;
  readonly rules?: readonly CelRule[];
}

/** A string with optional length bounds; `rules` become `x-kubernetes-validations`. */
export function Str(opts: StrOptions = {}): TString {
  return Type.String({
    ...(opts.description !== undefined ? { description: opts.description } : {}),
    ...(opts.min !== undefined ? { minLength: opts.min } : {}),
    ...(opts.max !== undefined ? { maxLength: opts.max } : {}),
    ...(opts.pattern !== undefined ? { pattern: opts.pattern } : {}),
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...celRules(opts.rules),
  });
}

/** Marks a schema `nullable: true`: the API server keeps an explicit null instead of pruning it. */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/** A string enum; the TypeScript type is the union of the literal values. */
export function StringEnum<const V extends readonly string[]>(
  values: V,
  opts: { readonly default?: V[number]; readonly description?: string } = {},
): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({
    type: 'string',
    ...(opts.description !== undefined ? { description: opts.description } : {}),
    enum: [...values],
    ...(opts.default !== undefined ? { default: opts.default } : {}),
  });
}

/** A string-keyed map (`additionalProperties`), the only map shape a structural schema allows. */
export function MapOf<T extends TSchema>(
  value: T,
  opts: {
    readonly maxProperties?: number;
    readonly default?: Record<string, never>;
    readonly description?: string;
  } = {},
): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({
    type: 'object',
    ...(opts.description !== undefined ? { description: opts.description } : {}),
    ...(opts.maxProperties !== undefined ? { maxProperties: opts.maxProperties } : {}),
    additionalProperties: value,
    ...(opts.default !== undefined ? { default: opts.default } : {}),
  });
}

/** Options for {@link List}: bounds, API-server default, list type and list-map keys. */
export interface ListOptions {
  readonly min?: number;
  readonly max?: number;
  readonly default?: readonly never[];
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly mapKeys?: readonly string[];
  readonly description?: string;
  readonly rules?: readonly CelRule[];
}

/** An array; give `max` wherever a CEL rule reads the list, so the API server's cost estimate stays finite. */
export function List<T extends TSchema>(item: T, opts: ListOptions): TArray<T> {
  return Type.Array(item, {
    ...(opts.description !== undefined ? { description: opts.description } : {}),
    ...(opts.min !== undefined ? { minItems: opts.min } : {}),
    ...(opts.max !== undefined ? { maxItems: opts.max } : {}),
    ...(opts.default !== undefined ? { default: [...opts.default] } : {}),
    ...(opts.listType !== undefined ? { 'x-kubernetes-list-type': opts.listType } : {}),
    ...(opts.mapKeys !== undefined ? { 'x-kubernetes-list-map-keys': [...opts.mapKeys] } : {}),
    ...celRules(opts.rules),
  });
}

/** Spreads `x-kubernetes-validations` into schema options when there are rules. */
export function celRules(rules: readonly CelRule[] | undefined): { 'x-kubernetes-validations'?: CelRule[] } {
  return rules !== undefined && rules.length > 0 ? { 'x-kubernetes-validations': [...rules] } : {};
}

/** `default` for a field only when the caller wants API-server defaults (candidate content has none). */
export function dflt<V>(withDefaults: boolean, value: V): { default?: V } {
  return withDefaults ? { default: value } : {};
}

/** Boolean with an optional default. */
export function Bool(
  opts: { readonly default?: boolean; readonly description?: string } = {},
): ReturnType<typeof Type.Boolean> {
  return Type.Boolean({
    ...(opts.description !== undefined ? { description: opts.description } : {}),
    ...(opts.default !== undefined ? { default: opts.default } : {}),
  });
}

/** int32 integer (OpenAPI `format: int32`). */
export function Int32(
  opts: { readonly default?: number; readonly minimum?: number; readonly maximum?: number } = {},
): ReturnType<typeof Type.Integer> {
  return Type.Integer({ format: 'int32', ...opts });
}

/** int64 integer (OpenAPI `format: int64`); JavaScript numbers hold the values Kubernetes uses here. */
export function Int64(opts: { readonly minimum?: number } = {}): ReturnType<typeof Type.Integer> {
  return Type.Integer({ format: 'int64', ...opts });
}

/** Shorthand for an optional property. */
export const Opt = Type.Optional;

/** Attaches a `description` (shown by `kubectl explain`) without changing the node's TypeScript type. */
export function Doc<T extends TSchema>(description: string, schema: T): T {
  return { ...schema, description };
}
