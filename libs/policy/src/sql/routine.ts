// Splits a function key `proname(identity args)` into a quoted name and a raw argument list.
// The argument text is appended to SQL unquoted, so it is admitted only if it is a plausible identity-argument list.

import { SqlRenderError } from './errors.js';
import { quoteQualified } from './quote.js';

/** A function key split at the `(` that opens a well-formed identity-argument list. */
export interface RoutineName {
  /** The function name as stored in `pg_proc.proname` (any characters). */
  readonly base: string;
  /** The identity arguments without the outer parentheses, or null when the key has none. */
  readonly args: string | null;
}

const IDENT_CHAR = /[\p{L}\p{M}\p{N}_$]/u;
// Outside double quotes an identity argument list holds only words, spaces, commas, dots and `[]`
// (`p_id integer, OUT x text, VARIADIC rest "My Type"[]`); everything else could end the statement,
// open a comment or a dollar quote, so it is refused rather than escaped.
const BARE_CHAR = /[\p{L}\p{M}\p{N}_$ ,.[\]]/u;

/**
 * True when `args` (the text between the outer parentheses) is a plausible
 * `pg_get_function_identity_arguments` result: balanced double-quoted identifiers, no `;`, no parentheses,
 * quotes, comment openers or dollar quotes outside identifiers.
 */
export function isPlausibleIdentityArgs(args: string): boolean {
  if (args.includes(';') || args.includes('\0')) return false;
  const chars = Array.from(args);
  let inQuotes = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (inQuotes) {
      if (c === '"') {
        if (chars[i + 1] === '"') i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === '"') {
      inQuotes = true;
      continue;
    }
    if (!BARE_CHAR.test(c)) return false;
    // `$` may continue an identifier but never start a token (`$$`/`$1` open a dollar quote or parameter).
    if (c === '$' && (i === 0 || !IDENT_CHAR.test(chars[i - 1]!) || chars[i - 1] === '$')) return false;
  }
  return !inQuotes;
}

/**
 * Splits `proname(args)`: base is the text before the rightmost `(` whose remainder is a plausible argument
 * list (so a `(` inside the name or inside a quoted type is handled). A key without `(` has no argument list.
 * A key with `(` but no plausible split is an error: its argument text would be appended raw.
 */
export function splitRoutineName(name: string): RoutineName {
  if (!name.includes('(')) return { base: name, args: null };
  if (name.endsWith(')')) {
    for (let open = name.lastIndexOf('('); open > 0; open = name.lastIndexOf('(', open - 1)) {
      const args = name.slice(open + 1, -1);
      if (isPlausibleIdentityArgs(args)) return { base: name.slice(0, open), args };
    }
  }
  throw new SqlRenderError(
    'invalid_function_signature',
    `function ${JSON.stringify(name)} does not end in a plausible identity-argument list`,
  );
}

/** `"s"."base"(args)` (after `ROUTINE`), or `"s"."base"` for a key without arguments. */
export function renderRoutineTarget(schema: string, name: string): string {
  const { base, args } = splitRoutineName(name);
  const qualified = quoteQualified(schema, base);
  return args === null ? qualified : `${qualified}(${args})`;
}
