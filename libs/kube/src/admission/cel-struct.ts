// MutatingAdmissionPolicy expressions build typed objects with CEL's message syntax:
// `Object{spec: Object.spec{replicas: 3}}` (ApplyConfiguration) and
// `JSONPatch{op: "add", path: "/x", value: 1}`. @marcbachmann/cel-js has no message construction, and
// these types carry no behaviour beyond their fields, so expressions are rewritten into map literals
// with quoted keys (`{"spec": {"replicas": 3}}`) before parsing. String literals are left untouched.

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const TYPE_PREFIX = /(?:Object(?:\.[A-Za-z_][A-Za-z0-9_]*)*|JSONPatch)\s*\{/y;

/** Length of the string literal starting at `i` (quotes `'`, `"`, triple quotes, raw/bytes prefixes). */
function stringLength(src: string, i: number): number {
  const quote = src[i]!;
  const triple = src.startsWith(quote.repeat(3), i);
  const end = triple ? quote.repeat(3) : quote;
  let j = i + end.length;
  while (j < src.length) {
    if (src[j] === '\\') j += 2;
    else if (src.startsWith(end, j)) return j + end.length - i;
    else j++;
  }
  return src.length - i;
}

/** Rewrites `Type{field: v}` message construction into `{"field": v}` map literals. */
export function rewriteStructs(src: string): string {
  let out = '';
  // One entry per open bracket: true for a rewritten message literal (its keys get quoted).
  const stack: boolean[] = [];
  let expectKey = false;
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      const n = stringLength(src, i);
      out += src.slice(i, i + n);
      i += n;
      expectKey = false;
      continue;
    }
    if (/\s/.test(c)) {
      out += c;
      i++;
      continue;
    }
    const prev = out.trimEnd().slice(-1);
    TYPE_PREFIX.lastIndex = i;
    const typed = TYPE_PREFIX.exec(src);
    // A type name starts a literal only where an operand may start (not `x.Object{`).
    if (typed && !/[A-Za-z0-9_.)\]]/.test(prev)) {
      out += '{';
      stack.push(true);
      i += typed[0].length;
      expectKey = true;
      continue;
    }
    if (expectKey && stack[stack.length - 1]) {
      IDENT.lastIndex = i;
      const key = IDENT.exec(src);
      if (key && /^\s*:/.test(src.slice(i + key[0].length))) {
        out += JSON.stringify(key[0]);
        i += key[0].length;
        expectKey = false;
        continue;
      }
    }
    expectKey = false;
    if (c === '{' || c === '(' || c === '[') stack.push(false);
    else if (c === '}' || c === ')' || c === ']') stack.pop();
    else if (c === ',' && stack[stack.length - 1]) expectKey = true;
    out += c;
    i++;
  }
  return out;
}
