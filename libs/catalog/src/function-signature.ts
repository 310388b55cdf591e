// Turns a declared function argument list into the types-only form `to_regprocedure` parses: argument
// names and modes are dropped (PostgreSQL 15 raises a syntax error on `f(a integer)` instead of null).

/** Words that open a multi-word type name, so a following word is part of the type, not a name. */
const MULTIWORD_TYPE_HEADS: ReadonlySet<string> = new Set([
  'double',
  'character',
  'char',
  'bit',
  'timestamp',
  'time',
  'interval',
  'national',
  'varchar',
]);

const MODES: ReadonlySet<string> = new Set(['in', 'out', 'inout', 'variadic']);

/** Splits on `separator` outside double quotes and parentheses (e.g. `numeric(10, 2)`). */
function splitTopLevel(text: string, separator: (ch: string) => boolean): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '(') depth += 1;
    else if (!quoted && ch === ')') depth -= 1;
    if (!quoted && depth === 0 && separator(ch)) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part.length > 0);
}

/** True when a word is a plain or quoted identifier that can be an argument name. */
function isIdentifier(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_$]*$/.test(word) || /^"(?:[^"]|"")+"$/.test(word);
}

/** One argument without its mode and name; null for an OUT argument (not part of the signature). */
function argumentType(argument: string): string | null {
  let words = splitTopLevel(argument, (ch) => /\s/.test(ch));
  const mode = words[0]?.toLowerCase();
  if (words.length > 1 && mode !== undefined && MODES.has(mode)) {
    if (mode === 'out') return null;
    words = words.slice(1);
  }
  const first = words[0];
  if (
    words.length > 1 &&
    first !== undefined &&
    isIdentifier(first) &&
    !MULTIWORD_TYPE_HEADS.has(first.toLowerCase()) &&
    !(words[1] ?? '').startsWith('(') &&
    !(words[1] ?? '').startsWith('[')
  ) {
    words = words.slice(1);
  }
  return words.join(' ');
}

/**
 * The types-only argument list of a declared argument list: `a integer, OUT x text` -> `integer`.
 * @example `typesOnlyArguments('p_id integer, b double precision')` === `'integer, double precision'`
 */
export function typesOnlyArguments(args: string): string {
  return splitTopLevel(args, (ch) => ch === ',')
    .map(argumentType)
    .filter((type): type is string => type !== null)
    .join(', ');
}

/**
 * Index of the `(` opening the argument list: the one matching the final `)`, so a base name may hold
 * parentheses (`a(b` is a legal quoted name) and a type may too (`numeric(10, 2)`); -1 without a list.
 */
export function argumentListStart(declared: string): number {
  if (!declared.endsWith(')')) return declared.lastIndexOf('(');
  let depth = 0;
  for (let index = declared.length - 1; index >= 0; index -= 1) {
    const ch = declared[index];
    if (ch === ')') depth += 1;
    else if (ch === '(') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return declared.lastIndexOf('(');
}
