// Identifier and literal quoting for every SQL statement the engine emits.
// Everything is quoted (no "is it a keyword?" guessing); only the exact grantee `PUBLIC` stays bare.

import { PUBLIC_GRANTEE } from '../model/vocabulary.js';
import { SqlRenderError } from './errors.js';

/**
 * Quotes an identifier: `"` + text with `"` doubled + `"`. PostgreSQL cannot store NUL in a name and
 * rejects zero-length delimited identifiers, so both are refused here instead of at execution time.
 *
 * @example quoteIdent('a"b') === '"a""b"'
 */
export function quoteIdent(name: string): string {
  if (name.length === 0) {
    throw new SqlRenderError('invalid_identifier', 'identifier must not be empty');
  }
  if (name.includes('\0')) {
    throw new SqlRenderError('invalid_identifier', 'identifier must not contain a NUL character');
  }
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Quotes a string literal for `standard_conforming_strings = on` (the default since 9.1):
 * `'` doubled, backslashes left as they are.
 *
 * @example quoteLiteral("it's") === "'it''s'"
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\0')) {
    throw new SqlRenderError('invalid_literal', 'literal must not contain a NUL character');
  }
  return `'${value.replaceAll("'", "''")}'`;
}

/** `"schema"."name"`. */
export function quoteQualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

// PostgreSQL's grammar turns a role specifier spelled `public` into the PUBLIC pseudo-role even when it is
// double-quoted, and `none` is refused; neither can be a real role (`role name "public" is reserved`).
const RESERVED_ROLE_NAMES: readonly string[] = ['public', 'none'];

/**
 * Quotes a role name for any role position (grantee, owner, member, `ALTER ROLE`, `DROP ROLE`, ...).
 * Refuses `public` and `none`: quoting does not protect them, and `"public"` would silently mean PUBLIC.
 */
export function quoteRole(name: string): string {
  if (RESERVED_ROLE_NAMES.includes(name)) {
    throw new SqlRenderError(
      'invalid_identifier',
      `role name ${JSON.stringify(name)} is reserved by PostgreSQL and cannot be rendered as a role`,
    );
  }
  return quoteIdent(name);
}

/**
 * Renders a grantee: the exact string `PUBLIC` is the pseudo-role and stays bare; `"PUBLIC"` (with quotes)
 * and other spellings are ordinary role names and are quoted. `public` is refused (see `quoteRole`).
 */
export function renderGrantee(grantee: string): string {
  return grantee === PUBLIC_GRANTEE ? 'PUBLIC' : quoteRole(grantee);
}
