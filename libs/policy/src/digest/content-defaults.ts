// The API-server defaults of the PostgresPolicy CRD inside policy content. A stored policy carries them; a
// candidate's content (no defaults in its CRD) does not. The content digest fills them on both sides, so an
// omitted field and its explicit default digest equally (ADR 0007). libs/kube pins this table to the CRD.

/** One defaulted field: its path (`[]` = every list item) and the value the API server stores when absent. */
export interface ContentDefault {
  readonly path: readonly string[];
  readonly value: string | number | boolean;
}

/**
 * Every scalar API default under the content fields. List (`[]`) and map (`{}`) defaults are not here:
 * the digest drops empty lists and maps, so they equal an absent field anyway.
 */
export const CONTENT_API_DEFAULTS: readonly ContentDefault[] = [
  { path: ['reconciliation_mode'], value: 'authoritative' },
  { path: ['memberships', '[]', 'exclusive'], value: false },
  { path: ['roles', '[]', 'external'], value: false },
  { path: ['roles', '[]', 'preserve_undeclared_grants'], value: false },
  { path: ['roles', '[]', 'password', 'generate', 'length'], value: 32 },
  { path: ['roles', '[]', 'password', 'generate', 'secretKey'], value: 'password' },
  { path: ['roles', '[]', 'password', 'generate', 'secretName'], value: '{policy}-gen-{role}' },
  { path: ['retirements', '[]', 'drop_owned'], value: false },
  { path: ['retirements', '[]', 'terminate_sessions'], value: false },
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Writes `value` at `path` below `node` where the field is absent or null; copies on the way down. */
function fill(node: unknown, path: readonly string[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return node;
  if (head === '[]') return Array.isArray(node) ? node.map((item) => fill(item, rest, value)) : node;
  if (!isRecord(node)) return node;
  const child = node[head];
  if (rest.length === 0) return child === undefined || child === null ? { ...node, [head]: value } : node;
  // A parent object that is absent stays absent (no `password: {generate: …}` is invented).
  if (child === undefined || child === null) return node;
  return { ...node, [head]: fill(child, rest, value) };
}

/** `content` with every API default of {@link CONTENT_API_DEFAULTS} filled in where its parent exists. */
export function withContentDefaults(content: Readonly<Record<string, unknown>>): Record<string, unknown> {
  let out: unknown = content;
  for (const entry of CONTENT_API_DEFAULTS) out = fill(out, entry.path, entry.value);
  return out as Record<string, unknown>;
}
