// NATS subject wildcard matching (`*` = one token, `>` = one or more trailing tokens).
// Used to route JetStream messages to Nest handlers and to decide which durable consumers an app needs.

/** Splits a subject or pattern into its dot-separated tokens. */
function tokens(subject: string): readonly string[] {
  return subject.split('.');
}

/**
 * True when the concrete `subject` is matched by the NATS `pattern`.
 * @example subjectMatches('rp.resource.*.*.*', 'rp.resource.postgrespolicy.team-a.orders') // true
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = tokens(pattern);
  const s = tokens(subject);
  for (let i = 0; i < p.length; i++) {
    const token = p[i];
    if (token === '>') return s.length > i;
    if (i >= s.length) return false;
    if (token !== '*' && token !== s[i]) return false;
  }
  return p.length === s.length;
}

/**
 * True when every subject matched by `inner` is also matched by `outer`, i.e. a consumer filtered
 * on `outer` can feed a handler registered for `inner`.
 * @example patternWithin('rp.execute.request', 'rp.execute.>') // true
 */
export function patternWithin(inner: string, outer: string): boolean {
  const i = tokens(inner);
  const o = tokens(outer);
  for (let k = 0; k < o.length; k++) {
    const ot = o[k];
    if (ot === '>') return i.length > k;
    const it = i[k];
    if (it === undefined || it === '>') return false;
    if (ot === '*') continue;
    if (it === '*' || it !== ot) return false;
  }
  return i.length === o.length;
}

/**
 * True when some subject is matched by both patterns, i.e. a consumer filtered on one of them may
 * deliver messages that a handler registered for the other one should see.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const x = tokens(a);
  const y = tokens(b);
  for (let k = 0; ; k++) {
    const xt = x[k];
    const yt = y[k];
    if (xt === '>') return yt !== undefined;
    if (yt === '>') return xt !== undefined;
    if (xt === undefined || yt === undefined) return xt === yt;
    if (xt !== '*' && yt !== '*' && xt !== yt) return false;
  }
}
