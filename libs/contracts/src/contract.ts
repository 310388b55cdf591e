// A message contract: one subject pattern and one TypeBox schema per payload version (`v`).
// Decoding validates on receipt with ajv and returns a typed value or a reason; it never throws.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';

/** Contract of the messages on one subject pattern, keyed by payload version. */
export type MessageContract<
  Versions extends Readonly<Record<number, TSchema>> = Readonly<Record<number, TSchema>>,
> = {
  /** Short name for logs and metrics, e.g. `execute-request`. */
  readonly name: string;
  /** NATS subject or wildcard pattern the messages travel on. */
  readonly subject: string;
  /** TypeBox schema per supported value of `v`; each must require `v` as that literal. */
  readonly versions: Versions;
};

/** The typed payload of any supported version of a contract. */
export type PayloadOf<C extends MessageContract> = C['versions'][keyof C['versions']] extends infer S extends
  TSchema
  ? Static<S>
  : never;

/** Why a payload was refused; the text never contains payload values (they may be secret). */
export type DecodeFailure = {
  readonly ok: false;
  readonly reason:
    'malformed_json' | 'not_an_object' | 'missing_version' | 'unknown_version' | 'schema_mismatch';
  readonly detail: string;
};

/** Outcome of {@link decodePayload}. */
export type DecodeResult<T> =
  { readonly ok: true; readonly value: T; readonly version: number } | DecodeFailure;

/** Declares a contract; the identity function exists so the version map keeps its literal types. */
export function defineContract<const V extends Readonly<Record<number, TSchema>>>(
  contract: MessageContract<V>,
): MessageContract<V> {
  return contract;
}

type AddFormats = (ajv: Ajv) => Ajv;
const isAddFormats = (value: unknown): value is AddFormats => typeof value === 'function';
/** ajv-formats is CommonJS; under NodeNext its default export arrives either wrapped or bare. */
function unwrapAddFormats(module: unknown): AddFormats {
  if (typeof module === 'object' && module !== null && 'default' in module && isAddFormats(module.default))
    return module.default;
  if (isAddFormats(module)) return module;
  throw new Error('ajv-formats exports no plugin function');
}
const addFormats = unwrapAddFormats(addFormatsModule);

// Two compilations of each schema: one that stops at the first error decides (a valid payload, the hot
// path, is checked once and allocates no error objects; in a union every failing branch would otherwise
// collect all its errors), and one with allErrors explains a refusal. Both decide alike, so a refusal's
// detail is what it always was.
const decider = addFormats(new Ajv({ allErrors: false, strict: true, verbose: false }));
const explainer = addFormats(new Ajv({ allErrors: true, strict: true, verbose: false }));
interface Validators {
  readonly schema: TSchema;
  readonly accepts: ValidateFunction;
  /** Compiled at the first refusal. */
  explain?: ValidateFunction;
}
const compiled = new WeakMap<TSchema, Validators>();

function validatorsFor(schema: TSchema): Validators {
  let validators = compiled.get(schema);
  if (!validators) {
    validators = { schema, accepts: decider.compile(schema) };
    compiled.set(schema, validators);
  }
  return validators;
}

/** Describes ajv errors by path and rule only, so that no payload value leaks into logs. */
function describeErrors(validators: Validators, value: unknown): string {
  validators.explain ??= explainer.compile(validators.schema);
  validators.explain(value);
  return (validators.explain.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`)
    .join('; ');
}

// Shared: decoding and encoding UTF-8 keep no state between calls (no streaming).
const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

/**
 * Validates an already-parsed value against the contract (version picked by its `v` field).
 * @example validatePayload(executeRequestContract, { v: 1, ... })
 */
export function validatePayload<C extends MessageContract>(
  contract: C,
  value: unknown,
): DecodeResult<PayloadOf<C>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not_an_object', detail: `${contract.name}: payload is not a JSON object` };
  }
  const version = (value as { readonly v?: unknown }).v;
  if (version === undefined) {
    return { ok: false, reason: 'missing_version', detail: `${contract.name}: payload has no "v" field` };
  }
  const schema = typeof version === 'number' ? contract.versions[version] : undefined;
  if (typeof version !== 'number' || schema === undefined) {
    const known = Object.keys(contract.versions).join(', ');
    return {
      ok: false,
      reason: 'unknown_version',
      detail: `${contract.name}: unsupported version v=${JSON.stringify(version).slice(0, 20)} (supported: ${known})`,
    };
  }
  const validators = validatorsFor(schema);
  if (!validators.accepts(value)) {
    return {
      ok: false,
      reason: 'schema_mismatch',
      detail: `${contract.name} v${version}: ${describeErrors(validators, value)}`,
    };
  }
  return { ok: true, value: value as PayloadOf<C>, version };
}

/** Parses UTF-8 JSON bytes and validates them against the contract. */
export function decodePayload<C extends MessageContract>(
  contract: C,
  data: Uint8Array,
): DecodeResult<PayloadOf<C>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Decoder.decode(data));
  } catch {
    return { ok: false, reason: 'malformed_json', detail: `${contract.name}: payload is not valid JSON` };
  }
  return validatePayload(contract, parsed);
}

/**
 * Validates an outgoing payload and encodes it; throws when the sender would break the contract,
 * because that is a programming error on the sending side, not bad input.
 */
export function encodePayload<C extends MessageContract>(contract: C, payload: PayloadOf<C>): Uint8Array {
  const result = validatePayload(contract, payload);
  if (!result.ok) throw new Error(`refusing to send invalid ${result.detail}`);
  return utf8Encoder.encode(JSON.stringify(payload));
}
