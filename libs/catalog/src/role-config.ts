// Canonical forms of role attributes as the catalog stores them: rolconfig entries and list GUCs.
// List GUCs are split like PostgreSQL's SplitGUCList and re-quoted, so both sides compare equal.

import { compareCodePoints } from '@rolepolicy/policy';

/** GUCs PostgreSQL stores as quoted identifier lists (GUC_LIST_QUOTE). */
export const LIST_GUCS: ReadonlySet<string> = new Set([
  'local_preload_libraries',
  'search_path',
  'session_preload_libraries',
  'shared_preload_libraries',
  'temp_tablespaces',
]);

/** Splits a stored list GUC value into elements (double-quoted elements unquoted, `""` undoubled). */
export function splitGucList(value: string): string[] {
  const elements: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < value.length && /\s/.test(value[i]!)) i++;
  };
  skipSpace();
  if (i >= value.length) return elements;
  for (;;) {
    let element = '';
    if (value[i] === '"') {
      i++;
      for (; i < value.length; i++) {
        if (value[i] === '"') {
          if (value[i + 1] === '"') {
            element += '"';
            i++;
          } else break;
        } else element += value[i];
      }
      i++;
    } else {
      const start = i;
      while (i < value.length && value[i] !== ',') i++;
      element = value.slice(start, i).trimEnd();
    }
    elements.push(element);
    skipSpace();
    if (value[i] !== ',') break;
    i++;
    skipSpace();
  }
  return elements;
}

/** Quotes a list element the way PostgreSQL's quote_identifier does for non-simple names. */
export function quoteListElement(element: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(element) ? element : `"${element.replaceAll('"', '""')}"`;
}

/** The canonical value of a config parameter: list GUCs element-wise re-quoted and joined by `, `. */
export function canonicalConfigValue(parameter: string, value: string): string {
  if (!LIST_GUCS.has(parameter)) return value;
  return splitGucList(value).map(quoteListElement).join(', ');
}

/** Parses `rolconfig` (`name=value` entries): split on the first `=`, keys lowercased, values canonical. */
export function parseRoleConfig(entries: readonly string[] | null): Record<string, string> {
  const pairs: [string, string][] = [];
  for (const entry of entries ?? []) {
    const at = entry.indexOf('=');
    if (at < 0) continue;
    const key = entry.slice(0, at).toLowerCase();
    pairs.push([key, canonicalConfigValue(key, entry.slice(at + 1))]);
  }
  // Keys in code-point order so the JSON form of a snapshot is stable.
  pairs.sort(([a], [b]) => compareCodePoints(a, b));
  return Object.fromEntries(pairs);
}
