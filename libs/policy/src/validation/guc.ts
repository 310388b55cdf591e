// Role config (GUC) names and values: the name rule, and list GUCs canonicalised exactly as PostgreSQL stores
// them in rolconfig (split like SplitGUCList, re-quoted like quote_identifier, joined with ", ").

/** GUCs whose values PostgreSQL stores as quoted identifier lists. */
export const LIST_GUCS: readonly string[] = [
  'local_preload_libraries',
  'search_path',
  'session_preload_libraries',
  'shared_preload_libraries',
  'temp_tablespaces',
];

const CONFIG_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Config names are dot-joined `[A-Za-z_][A-Za-z0-9_]*` segments of at most 63 characters. */
export function isValidConfigName(name: string): boolean {
  return name.length <= 63 && CONFIG_NAME.test(name);
}

const WHITESPACE = /\s/;

/**
 * Splits a GUC list like PostgreSQL's SplitGUCList (quoted items with `""` escapes, whitespace around items
 * dropped, no downcasing); undefined on an unclosed quote, text after a closing quote, or an empty item.
 */
export function splitGucList(value: string): readonly string[] | undefined {
  const items: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < value.length && WHITESPACE.test(value[i]!)) i++;
  };
  skipSpace();
  if (i === value.length) return items;
  for (;;) {
    let item = '';
    if (value[i] === '"') {
      i++;
      for (;;) {
        if (i >= value.length) return undefined;
        if (value[i] === '"') {
          if (value[i + 1] === '"') {
            item += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        item += value[i];
        i++;
      }
    } else {
      // Unlike SplitGUCList, an unquoted item may contain inner spaces (`My Schema`): the renderer sends each
      // item as its own literal, so PostgreSQL stores it quoted. This keeps `{schema}` placeholders usable.
      while (i < value.length && value[i] !== ',') item += value[i++];
      item = item.trimEnd();
    }
    if (item === '') return undefined;
    items.push(item);
    skipSpace();
    if (i === value.length) return items;
    if (value[i] !== ',') return undefined;
    i++;
    skipSpace();
  }
}

const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Quotes a list element as PostgreSQL's quote_identifier does (keywords aside: see docs/next-steps). */
function quoteElement(element: string): string {
  return SAFE_IDENTIFIER.test(element) ? element : `"${element.replaceAll('"', '""')}"`;
}

/**
 * Canonical form of a config value as PostgreSQL stores it: list GUCs re-quoted element-wise and joined with
 * ", "; other values unchanged (values compare as opaque strings). Undefined for an invalid list.
 * @example canonicalConfigValue('search_path', 'a,"unclosed') === undefined
 * @example canonicalConfigValue('search_path', 'a, "My Schema", $user') === 'a, "My Schema", "$user"'
 */
export function canonicalConfigValue(name: string, value: string): string | undefined {
  if (!LIST_GUCS.includes(name.toLowerCase())) return value;
  const items = splitGucList(value);
  return items === undefined ? undefined : items.map(quoteElement).join(', ');
}
