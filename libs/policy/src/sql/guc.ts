// Renders `ALTER ROLE ... SET` values: list-quote GUCs as one literal per element, everything else as one literal.
// `SET search_path = 'a, b'` would create ONE schema name containing a comma, so lists are never sent as one string.

import { quoteIdent, quoteLiteral, quoteRole } from './quote.js';

/**
 * GUCs PostgreSQL flags GUC_LIST_QUOTE (settable per role): their stored value is a list whose elements
 * are double-quoted when needed (`a, "My Schema", "$user"`).
 */
export const LIST_QUOTE_GUCS: readonly string[] = [
  'local_preload_libraries',
  'search_path',
  'session_preload_libraries',
  'shared_preload_libraries',
  'temp_tablespaces',
];

/** True when `parameter` (any case) is a list-quote GUC. */
export function isListGuc(parameter: string): boolean {
  return LIST_QUOTE_GUCS.includes(parameter.toLowerCase());
}

/**
 * Splits a canonical list value the way PostgreSQL's SplitGUCList does: commas separate elements,
 * surrounding whitespace is dropped, `"..."` elements keep their text with `""` undoubled, unquoted
 * elements are NOT downcased. An empty or blank value is the empty list.
 */
export function splitGucList(value: string): readonly string[] {
  const elements: string[] = [];
  const chars = Array.from(value);
  let i = 0;
  const skipSpace = (): void => {
    while (i < chars.length && /\s/u.test(chars[i]!)) i++;
  };
  skipSpace();
  if (i >= chars.length) return elements;
  for (;;) {
    let element = '';
    if (chars[i] === '"') {
      i++;
      while (i < chars.length) {
        if (chars[i] === '"') {
          if (chars[i + 1] === '"') {
            element += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        element += chars[i]!;
        i++;
      }
      skipSpace();
    } else {
      while (i < chars.length && chars[i] !== ',') element += chars[i++]!;
      element = element.trimEnd();
    }
    elements.push(element);
    if (i < chars.length && chars[i] === ',') {
      i++;
      skipSpace();
      continue;
    }
    // Text after a closing quote that is not a comma: keep it attached, as the server would reject it anyway.
    if (i < chars.length) {
      elements[elements.length - 1] += chars.slice(i).join('');
    }
    return elements;
  }
}

/** The right-hand side of `SET "p" = ...` for `value`. */
export function renderGucValue(parameter: string, value: string): string {
  if (!isListGuc(parameter)) return quoteLiteral(value);
  const elements = splitGucList(value);
  return elements.length === 0 ? "''" : elements.map(quoteLiteral).join(', ');
}

/** `ALTER ROLE "n" SET "p" = v` (without the trailing `;`). */
export function renderSetConfig(role: string, parameter: string, value: string): string {
  return `ALTER ROLE ${quoteRole(role)} SET ${quoteIdent(parameter)} = ${renderGucValue(parameter, value)}`;
}

/** `ALTER ROLE "n" RESET "p"` (without the trailing `;`). */
export function renderResetConfig(role: string, parameter: string): string {
  return `ALTER ROLE ${quoteRole(role)} RESET ${quoteIdent(parameter)}`;
}
