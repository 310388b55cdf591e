// Metric names a PromQL expression reads: label matchers, ranges, strings and grouping clauses removed,
// functions (a name followed by an opening parenthesis) and operators' keywords skipped.
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
]);

/** The metric names `expr` selects, as written (a histogram's `_bucket` series included). */
export function metricNames(expr: string): Set<string> {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const name = match[0];
    const after = stripped.slice(match.index + name.length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(name)) continue;
    names.add(name);
  }
  return names;
}

/** Series names a Prometheus exposition declares (`# TYPE`), with a histogram's and summary's series. */
export function exportedSeries(exposition: string): Set<string> {
  const out = new Set<string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    out.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) out.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) out.add(name + suffix);
  }
  return out;
}
