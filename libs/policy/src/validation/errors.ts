// Validation errors and results: every error names the JSON path it is about (`spec.grants[3].object.name`)
// so admission, the CLI and status can point at the exact field; validation returns all of them at once.

import type { PolicyContent } from '../model/index.js';

/** One rule violation, at a JSON path such as `spec.grants[3].object.name`. */
export interface ValidationError {
  readonly path: string;
  readonly message: string;
}

/** Typed content, or every error found. */
export type ValidationResult =
  | { readonly ok: true; readonly content: PolicyContent }
  | { readonly ok: false; readonly errors: readonly ValidationError[] };

/** Options for {@link validateContent}: `root` prefixes every path (default `spec`). */
export interface ValidateOptions {
  readonly root?: string;
}

/** Mutable collector used while one validation pass runs. */
export interface ErrorSink {
  readonly errors: ValidationError[];
}

/** Records an error. */
export function report(sink: ErrorSink, path: string, message: string): void {
  sink.errors.push({ path, message });
}

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Appends an object key to a path: `a.b` for simple keys, `a["x y"]` otherwise, so paths stay unambiguous. */
export function keyPath(base: string, key: string): string {
  const segment = SIMPLE_KEY.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return base === '' ? segment.replace(/^\./, '') : `${base}${segment}`;
}

/** Appends an array index to a path: `a[3]`. */
export function indexPath(base: string, index: number): string {
  return `${base}[${index}]`;
}
