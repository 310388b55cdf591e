// The one error the SQL renderer raises: a change it cannot render safely (never a silent fallback).
// Messages name roles and objects only; they never carry verifiers, passwords or SQL with secrets.

/** Why a change could not be rendered. */
export type SqlRenderErrorCode =
  | 'missing_verifier'
  | 'invalid_verifier'
  | 'invalid_identifier'
  | 'invalid_literal'
  | 'invalid_function_signature'
  | 'missing_schema'
  | 'missing_name'
  | 'unsupported_default_privilege_type';

/**
 * Raised by `renderSql` when a change cannot become SQL without guessing.
 * `changeIndex` points into the rendered change list (-1 when raised outside a change).
 */
export class SqlRenderError extends Error {
  /** Machine-readable reason. */
  readonly code: SqlRenderErrorCode;
  /** Index of the offending change, or -1. */
  readonly changeIndex: number;

  constructor(code: SqlRenderErrorCode, message: string, changeIndex = -1) {
    super(message);
    this.name = 'SqlRenderError';
    this.code = code;
    this.changeIndex = changeIndex;
  }
}
