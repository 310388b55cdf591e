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
  const nodes = new Map<string, VisualNode>();
  const edges = new Map<string, VisualEdge>();
  const roleNames = new Set(after.roles.map((r) => r.name));
  for (const r of after.roles) {
    nodes.set(`role:${r.name}`, {
      id: `role:${r.name}`,
      label: r.name,
      kind: 'role',
      login: r.state.login,
      managed: managed.has(r.name),
      privileges: [],
    });
  }
  const principal = (name: string): string => {
    if (roleNames.has(name)) return `role:${name}`;
    const id = `external:${name}`;
    if (!nodes.has(id)) {
      nodes.set(id, {
        id,
        label: name,
        kind: 'external_principal',
        login: null,
        managed: null,
        privileges: [],
      });
    }
    return id;
  };
  const edge = (e: VisualEdge): void => {
    edges.set(`${e.source}\u0000${e.target}\u0000${e.kind}`, e);
  };

  for (const m of after.memberships) {
    const flags = [m.inherit ? '' : 'NOINHERIT', m.admin ? 'ADMIN' : ''].filter(Boolean);
    edge({
      source: principal(m.member),
      target: principal(m.role),
      kind: 'membership',
      label: ['member', ...flags].join(' '),
    });
  }

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
    const source = principal(g.grantee);
    const key = `${source}\u0000${t.id}`;
    const entry = grantEdges.get(key) ?? { source, target: t.id, privileges: new Set<string>() };
    for (const p of g.privileges) entry.privileges.add(p);
    grantEdges.set(key, entry);
  }
  for (const e of grantEdges.values()) {
    edge({
      source: e.source,
      target: e.target,
      kind: 'grant',
      label: [...e.privileges].sort(compareCodePoints).join(', '),
    });
  }

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
    nodes.set(t.id, {
      id: t.id,
      label: t.label,
      kind: 'default_privilege_target',
      login: null,
      managed: null,
      privileges: [...d.privileges],
    });
    edge({
      source: t.id,
      target: principal(d.grantee),
      kind: 'default_privilege',
      label: d.privileges.join(', '),
    });
  }

  const sortedNodes = [...nodes.values()].sort((a, b) => compareCodePoints(a.id, b.id));
  const sortedEdges = [...edges.values()].sort(
    (a, b) =>
      compareCodePoints(a.source, b.source) ||
      compareCodePoints(a.target, b.target) ||
      compareCodePoints(a.kind, b.kind),
  );
  return {
    schema_version: ROLE_GRAPH_SCHEMA_VERSION,
    meta: {
      source: 'desired',
      role_count: after.roles.length,
      grant_count: grantEdges.size,
      default_privilege_count: defaultCount,
      membership_count: sortedEdges.filter((e) => e.kind === 'membership').length,
      collapsed,
      managed_scope: managedScope,
    },
    nodes: sortedNodes,
    edges: sortedEdges,
  };
}
