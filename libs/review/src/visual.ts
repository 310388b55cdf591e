// recorded.visual: the simulated post-plan role graph (engine notes 6.4). Roles, external principals,
// grant targets and default-privilege targets as nodes; memberships, grants and defaults as edges.
// Role comments are never recorded. Large graphs collapse grant targets per (type, schema).

import {
  compareCodePoints,
  PUBLIC_GRANTEE,
  type CatalogSnapshot,
  type DefaultPrivilegeEntry,
  type DesiredState,
  type GrantEntry,
} from '@rolepolicy/policy';

import {
  ROLE_GRAPH_SCHEMA_VERSION,
  type ArtifactManagedScope,
  type Visual,
  type VisualEdge,
  type VisualNode,
} from './artifact.schema.js';

/** Above this many distinct grant targets, targets collapse to one node per (type, schema). */
export const COLLAPSE_GRANT_TARGETS = 120;

const PLURAL: Readonly<Record<string, string>> = {
  table: 'tables',
  view: 'views',
  materialized_view: 'materialized views',
  sequence: 'sequences',
  function: 'functions',
  type: 'types',
  schema: 'schemas',
  database: 'databases',
};

function targetOf(g: GrantEntry, collapsed: boolean): { id: string; label: string } {
  if (g.object_type === 'schema' || g.object_type === 'database') {
    const name = g.name ?? '';
    return { id: `grant:${g.object_type}:${name}:${name}`, label: `${g.object_type} ${name}` };
  }
  const schema = g.schema ?? '';
  if (collapsed || g.name === '*') {
    return { id: `grant:${g.object_type}:${schema}:*`, label: `${schema}.${PLURAL[g.object_type]}[*]` };
  }
  return { id: `grant:${g.object_type}:${schema}:${g.name ?? ''}`, label: `${schema}.${g.name ?? ''}` };
}

function defaultTarget(d: DefaultPrivilegeEntry): { id: string; label: string } {
  const scope = d.scope.type === 'global' ? '(global)' : d.scope.schema;
  return {
    id: `default:${d.owner}:${scope}:${d.on_type}:${d.grantee}`,
    label: `new ${PLURAL[d.on_type]} by ${d.owner}${d.scope.type === 'global' ? '' : ` in ${d.scope.schema}`}`,
  };
}

function defaultKey(d: Pick<DefaultPrivilegeEntry, 'owner' | 'scope' | 'on_type' | 'grantee'>): string {
  return JSON.stringify([d.owner, d.scope.type === 'global' ? null : d.scope.schema, d.on_type, d.grantee]);
}

// A surrogate (UTF-16 order differs from code-point order) or NUL (the key separator below) in a key part.
// eslint-disable-next-line no-control-regex -- NUL is what is being looked for
const NOT_NATIVE_ORDER = /[\u0000\ud800-\udfff]/;

/**
 * `items` sorted by their key parts, part by part in code-point order (all keys distinct). Parts without
 * surrogates or NUL order the same by UTF-16 units, so their NUL-joined keys are compared natively (much
 * faster than compareCodePoints on graphs of thousands of edges); otherwise part by part as the reference.
 */
function sortedByCodePoints<T>(items: readonly T[], partsOf: (item: T) => readonly string[]): T[] {
  const keyed = items.map((item) => ({ item, parts: partsOf(item), key: '' }));
  if (keyed.some((k) => k.parts.some((part) => NOT_NATIVE_ORDER.test(part)))) {
    const byParts = (a: readonly string[], b: readonly string[]): number => {
      for (let i = 0; i < a.length; i++) {
        const order = compareCodePoints(a[i]!, b[i]!);
        if (order !== 0) return order;
      }
      return 0;
    };
    return keyed.sort((a, b) => byParts(a.parts, b.parts)).map((k) => k.item);
  }
  for (const k of keyed) k.key = k.parts.join('\u0000');
  return keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((k) => k.item);
}

/** Nodes and edges being collected, with external principals added as they are first named. */
class GraphBuilder {
  readonly nodes = new Map<string, VisualNode>();
  readonly edges = new Map<string, VisualEdge>();

  constructor(private readonly roleNames: ReadonlySet<string>) {}

  /** The node id of a role, or of an external principal (added on first use). */
  principal(name: string): string {
    if (this.roleNames.has(name)) return `role:${name}`;
    const id = `external:${name}`;
    if (!this.nodes.has(id)) {
      this.nodes.set(id, {
        id,
        label: name,
        kind: 'external_principal',
        login: null,
        managed: null,
        privileges: [],
      });
    }
    return id;
  }

  edge(e: VisualEdge): void {
    this.edges.set(`${e.source}\u0000${e.target}\u0000${e.kind}`, e);
  }
}

/** Grant targets (folded per schema above COLLAPSE_GRANT_TARGETS) and one edge per grantee and target. */
function addGrants(graph: GraphBuilder, after: CatalogSnapshot): { collapsed: boolean; grantCount: number } {
  const { nodes } = graph;
  const targets = new Set(after.grants.map((g) => targetOf(g, false).id));
  const collapsed = targets.size > COLLAPSE_GRANT_TARGETS;
  const grantEdges = new Map<string, { source: string; target: string; privileges: Set<string> }>();
  for (const g of after.grants) {
    const t = targetOf(g, collapsed);
    const node = nodes.get(t.id);
    const privileges = new Set([...(node?.privileges ?? []), ...g.privileges]);
    nodes.set(t.id, {
      id: t.id,
      label: t.label,
      kind: 'grant_target',
      login: null,
      managed: null,
      privileges: [...privileges].sort(compareCodePoints),
    });
    const source = graph.principal(g.grantee);
    const key = `${source}\u0000${t.id}`;
    const entry = grantEdges.get(key) ?? { source, target: t.id, privileges: new Set<string>() };
    for (const p of g.privileges) entry.privileges.add(p);
    grantEdges.set(key, entry);
  }
  for (const e of grantEdges.values()) {
    graph.edge({
      source: e.source,
      target: e.target,
      kind: 'grant',
      label: [...e.privileges].sort(compareCodePoints).join(', '),
    });
  }
  return { collapsed, grantCount: grantEdges.size };
}

/**
 * Default-privilege targets the policy or the inspected state names (PostgreSQL's implicit PUBLIC defaults
 * of new roles are not news); returns how many were drawn.
 */
function addDefaults(
  graph: GraphBuilder,
  after: CatalogSnapshot,
  before: CatalogSnapshot,
  desired: DesiredState,
): number {
  const named = new Set(
    [...desired.default_privileges, ...desired.default_privilege_absences, ...before.default_privileges].map(
      defaultKey,
    ),
  );
  let defaultCount = 0;
  for (const d of after.default_privileges) {
    if (d.grantee === PUBLIC_GRANTEE && !named.has(defaultKey(d))) continue;
    defaultCount++;
    const t = defaultTarget(d);
    graph.nodes.set(t.id, {
      id: t.id,
      label: t.label,
      kind: 'default_privilege_target',
      login: null,
      managed: null,
      privileges: [...d.privileges],
    });
    graph.edge({
      source: t.id,
      target: graph.principal(d.grantee),
      kind: 'default_privilege',
      label: d.privileges.join(', '),
    });
  }
  return defaultCount;
}

/**
 * Builds the graph of `after` (the post-plan simulated snapshot). Defaults are drawn when the policy or the
 * inspected state names them (PostgreSQL's implicit PUBLIC defaults of new roles are not news).
 */
export function buildVisual(
  after: CatalogSnapshot,
  before: CatalogSnapshot,
  desired: DesiredState,
  managedScope: ArtifactManagedScope,
): Visual {
  const managed = new Set(desired.roles.filter((r) => !r.external).map((r) => r.name));
  const graph = new GraphBuilder(new Set(after.roles.map((r) => r.name)));
  for (const r of after.roles) {
    graph.nodes.set(`role:${r.name}`, {
      id: `role:${r.name}`,
      label: r.name,
      kind: 'role',
      login: r.state.login,
      managed: managed.has(r.name),
      privileges: [],
    });
  }
  for (const m of after.memberships) {
    const flags = [m.inherit ? '' : 'NOINHERIT', m.admin ? 'ADMIN' : ''].filter(Boolean);
    graph.edge({
      source: graph.principal(m.member),
      target: graph.principal(m.role),
      kind: 'membership',
      label: ['member', ...flags].join(' '),
    });
  }
  const { collapsed, grantCount } = addGrants(graph, after);
  const defaultCount = addDefaults(graph, after, before, desired);

  const sortedNodes = sortedByCodePoints([...graph.nodes.values()], (n) => [n.id]);
  const sortedEdges = sortedByCodePoints([...graph.edges.values()], (e) => [e.source, e.target, e.kind]);
  return {
    schema_version: ROLE_GRAPH_SCHEMA_VERSION,
    meta: {
      source: 'desired',
      role_count: after.roles.length,
      grant_count: grantCount,
      default_privilege_count: defaultCount,
      membership_count: sortedEdges.filter((e) => e.kind === 'membership').length,
      collapsed,
      managed_scope: managedScope,
    },
    nodes: sortedNodes,
    edges: sortedEdges,
  };
}
