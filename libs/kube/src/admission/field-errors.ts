// Field errors and the Status object, shaped and worded the way kube-apiserver reports an invalid object.
// Clients (kubectl, @kubernetes/client-node) show these strings verbatim, so the format is part of the contract.
import { GROUP } from '../constants.js';

/** field.ErrorType values the admission engine produces (the `reason` of a Status cause). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden';

/** One validation failure at a field path such as `spec.roles[0].name`. */
export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  /** The offending value as printed in the message; omitted where the API server omits it. */
  readonly badValue?: BadValue;
  readonly detail: string;
}

/** A printable bad value: strings are quoted, numbers and booleans bare, `raw` printed as-is. */
export type BadValue =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly value: number | bigint }
  | { readonly kind: 'raw'; readonly value: string };

/** The `Status` body of a 422 Invalid response. */
export interface KubeStatus {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure';
  readonly message: string;
  readonly reason: 'Invalid';
  readonly details: {
    readonly name: string;
    readonly group: string;
    readonly kind: string;
    readonly causes: readonly {
      readonly reason: FieldErrorType;
      readonly message: string;
      readonly field: string;
    }[];
  };
  readonly code: 422;
}

const TYPE_LABEL: { readonly [T in FieldErrorType]: string } = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
};

/** Renders a bad value as Go's %q / %v would. */
function renderBadValue(v: BadValue): string {
  switch (v.kind) {
    case 'string':
      return JSON.stringify(v.value);
    case 'number':
      return String(v.value);
    case 'raw':
      return v.value;
    default: {
      const never: never = v;
      return never;
    }
  }
}

/** The message after the field path, e.g. `Invalid value: "object": candidate spec is immutable`. */
export function fieldErrorBody(e: FieldError): string {
  const label = TYPE_LABEL[e.type];
  const head = e.badValue === undefined ? label : `${label}: ${renderBadValue(e.badValue)}`;
  return e.detail.length > 0 ? `${head}: ${e.detail}` : head;
}

/** `<field>: <body>`, one line of kubectl's error output. */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** Joins errors as an aggregate error prints: one error bare, several as `[a, b]`. */
export function aggregateMessage(errors: readonly FieldError[]): string {
  const lines = errors.map(fieldErrorString);
  return lines.length === 1 ? (lines[0] ?? '') : `[${lines.join(', ')}]`;
}

/**
 * Builds the 422 `Status` a real API server returns for an invalid custom resource:
 * `<Kind>.rolepolicy.io "<name>" is invalid: <field>: <body>`.
 */
export function invalidStatus(kind: string, name: string, errors: readonly FieldError[]): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${kind}.${GROUP} "${name}" is invalid: ${aggregateMessage(errors)}`,
    reason: 'Invalid',
    details: {
      name,
      group: GROUP,
      kind,
      causes: errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    },
    code: 422,
  };
}

/** Field path helpers: `.name` for properties, `[i]` for list items, `[key]` for map entries. */
export function childPath(parent: string, name: string): string {
  return parent.length === 0 ? name : `${parent}.${name}`;
}
/** Appends a list index or map key. */
export function indexPath(parent: string, index: number | string): string {
  return `${parent}[${index}]`;
}

/** Renders a list-map key tuple the way the API server prints a duplicate (Go's %#v of a map). */
export function goMapLiteral(entries: readonly (readonly [string, unknown])[]): string {
  const body = entries.map(
    ([k, v]) => `${JSON.stringify(k)}:${typeof v === 'string' ? JSON.stringify(v) : String(v)}`,
  );
  return `map[string]interface {}{${body.join(', ')}}`;
}
