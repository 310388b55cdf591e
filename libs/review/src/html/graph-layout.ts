// Lays out the artifact's role graph for the HTML report with dagre (at generation time, so the report needs
// no script to draw it) and marks what the plan adds, changes and removes, read from recorded.changes.

import dagre from '@dagrejs/dagre';

import type { ArtifactChange, ReviewArtifact, VisualEdge, VisualNode } from '../artifact.schema.js';

/** Above this many nodes the drawing folds grant and default targets per schema. */
export const DRAW_COLLAPSE_NODES = 260;
/** Above this many nodes after folding, only roles and memberships are drawn. */
export const DRAW_MEMBERSHIPS_ONLY_NODES = 600;
/** The most nodes ever drawn; beyond that the most relevant are kept (dagre needs seconds per thousand). */
export const DRAW_MAX_NODES = 400;
/** Components above this many nodes are ranked with dagre's linear longest-path ranker. */
const LARGE_COMPONENT = 150;

export type Mark = 'added' | 'changed' | 'removed' | null;

export interface DrawnNode {
  readonly id: string;
  readonly label: string;
  readonly kind: VisualNode['kind'];
  readonly login: boolean | null;
  readonly managed: boolean | null;
  readonly detail: string;
  readonly mark: Mark;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface DrawnEdge {
  readonly source: string;
  readonly target: string;
  readonly kind: VisualEdge['kind'];
  readonly label: string;
  readonly mark: Mark;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

export interface DrawnGraph {
  readonly nodes: readonly DrawnNode[];
  readonly edges: readonly DrawnEdge[];
  readonly width: number;
  readonly height: number;
  /** True when targets were folded per schema for drawing (or the artifact itself was collapsed). */
  readonly collapsed: boolean;
  /** Nodes left out of the drawing to keep it readable (0 when everything is drawn). */
  readonly omittedNodes: number;
}

type WorkNode = Omit<DrawnNode, 'x' | 'y' | 'width' | 'height'>;
type WorkEdge = Omit<DrawnEdge, 'points'>;

const round = (n: number): number => Math.round(n * 10) / 10;

/** Where a grant change lands in the visual graph: (principal name, target id prefix). */
function grantTarget(change: Extract<ArtifactChange, { kind: 'grant' | 'revoke' }>): string {
  if (change.object_type === 'schema' || change.object_type === 'database') {
    return `grant:${change.object_type}:${change.name ?? ''}:${change.name ?? ''}`;
  }
  const name = change.name === '*' || change.name == null ? '' : change.name;
  return `grant:${change.object_type}:${change.schema ?? ''}:${name}`;
}

function defaultTarget(
  change: Extract<ArtifactChange, { kind: 'set_default_privilege' | 'revoke_default_privilege' }>,
): string {
  const scope = change.scope.type === 'global' ? '(global)' : change.scope.schema;
  return `default:${change.owner}:${scope}:${change.on_type}:${change.grantee}`;
}

function principalId(name: string, roles: ReadonlySet<string>): string {
  return roles.has(name) ? `role:${name}` : `external:${name}`;
}

/** The drawable graph of an artifact: nodes and edges with marks and dagre coordinates. */
export function layoutRoleGraph(artifact: ReviewArtifact): DrawnGraph {
  const visual = artifact.recorded.visual;
  const roles = new Set(visual.nodes.filter((n) => n.kind === 'role').map((n) => n.label));
  const nodes = new Map<string, WorkNode>();
  for (const n of visual.nodes) {
    nodes.set(n.id, {
      id: n.id,
      label: n.label,
      kind: n.kind,
      login: n.login,
      managed: n.managed,
      detail: n.privileges.join(', '),
      mark: null,
    });
  }
  const edges = new Map<string, WorkEdge>();
  const edgeKey = (s: string, t: string, k: string): string => `${s}\u0000${t}\u0000${k}`;
  for (const e of visual.edges) edges.set(edgeKey(e.source, e.target, e.kind), { ...e, mark: null });

  const markNode = (id: string, mark: Mark, ghost?: Omit<WorkNode, 'mark'>): void => {
    const node = nodes.get(id);
    if (node !== undefined) {
      if (node.mark === null || mark === 'added') nodes.set(id, { ...node, mark });
    } else if (ghost !== undefined) nodes.set(id, { ...ghost, mark: 'removed' });
  };
  const ghostPrincipal = (name: string): string => {
    const id = principalId(name, roles);
    markNode(id, 'removed', {
      id,
      label: name,
      kind: roles.has(name) ? 'role' : 'external_principal',
      login: null,
      managed: null,
      detail: '',
    });
    return id;
  };
  // Edge keys per source, so marking stays linear in plan size (edges added below are never marked again).
  const bySource = new Map<string, string[]>();
  for (const [key, e] of edges) bySource.set(e.source, [...(bySource.get(e.source) ?? []), key]);
  const markEdges = (
    source: string,
    targetPrefix: string,
    kind: VisualEdge['kind'],
    mark: Mark,
    exact: boolean,
  ): boolean => {
    let found = false;
    for (const key of bySource.get(source) ?? []) {
      const e = edges.get(key)!;
      const match =
        e.kind === kind && (exact ? e.target === targetPrefix : e.target.startsWith(targetPrefix));
      if (!match) continue;
      found = true;
      if (e.mark !== 'added') edges.set(key, { ...e, mark });
    }
    return found;
  };

  const added = new Set(
    artifact.recorded.changes.flatMap((c) =>
      c.change.kind === 'add_member' ? [`${c.change.role}\u0000${c.change.member}`] : [],
    ),
  );
  for (const { change } of artifact.recorded.changes) {
    switch (change.kind) {
      case 'create_role':
        markNode(`role:${change.name}`, 'added');
        break;
      case 'drop_role':
        ghostPrincipal(change.name);
        break;
      case 'alter_role':
      case 'set_password':
      case 'set_comment':
        markNode(`role:${change.name}`, 'changed');
        break;
      case 'add_member':
        markEdges(
          principalId(change.member, roles),
          principalId(change.role, roles),
          'membership',
          'added',
          true,
        );
        break;
      case 'remove_member': {
        if (added.has(`${change.role}\u0000${change.member}`)) break;
        const source = nodes.has(principalId(change.member, roles))
          ? principalId(change.member, roles)
          : ghostPrincipal(change.member);
        const target = nodes.has(principalId(change.role, roles))
          ? principalId(change.role, roles)
          : ghostPrincipal(change.role);
        edges.set(edgeKey(source, target, 'membership'), {
          source,
          target,
          kind: 'membership',
          label: 'member',
          mark: 'removed',
        });
        break;
      }
      case 'grant':
      case 'revoke': {
        const source = principalId(change.role, roles);
        const prefix = grantTarget(change);
        const exact =
          change.object_type === 'schema' ||
          change.object_type === 'database' ||
          (change.name != null && change.name !== '*');
        const hit =
          markEdges(
            source,
            prefix,
            'grant',
            change.kind === 'grant' ? 'added' : 'changed',
            exact && !visual.meta.collapsed,
          ) ||
          (visual.meta.collapsed &&
            markEdges(
              source,
              `grant:${change.object_type}:${change.schema ?? ''}:`,
              'grant',
              change.kind === 'grant' ? 'added' : 'changed',
              false,
            ));
        if (!hit && change.kind === 'revoke') {
          const from = nodes.has(source) ? source : ghostPrincipal(change.role);
          const targetId = exact ? prefix : `${prefix}*`;
          markNode(targetId, 'removed', {
            id: targetId,
            label:
              change.object_type === 'schema' || change.object_type === 'database'
                ? `${change.object_type} ${change.name ?? ''}`
                : `${change.schema ?? ''}.${change.name ?? '*'}`,
            kind: 'grant_target',
            login: null,
            managed: null,
            detail: change.privileges.join(', '),
          });
          edges.set(edgeKey(from, targetId, 'grant'), {
            source: from,
            target: targetId,
            kind: 'grant',
            label: change.privileges.join(', '),
            mark: 'removed',
          });
        }
        break;
      }
      case 'set_default_privilege':
      case 'revoke_default_privilege': {
        const id = defaultTarget(change);
        if (nodes.has(id)) {
          markNode(id, change.kind === 'set_default_privilege' ? 'added' : 'changed');
          for (const [key, e] of edges)
            if (e.source === id)
              edges.set(key, { ...e, mark: change.kind === 'set_default_privilege' ? 'added' : 'changed' });
        } else if (change.kind === 'revoke_default_privilege') {
          markNode(id, 'removed', {
            id,
            label: `new ${change.on_type}s by ${change.owner}${change.scope.type === 'global' ? '' : ` in ${change.scope.schema}`}`,
            kind: 'default_privilege_target',
            login: null,
            managed: null,
            detail: change.privileges.join(', '),
          });
          const target = nodes.has(principalId(change.grantee, roles))
            ? principalId(change.grantee, roles)
            : ghostPrincipal(change.grantee);
          edges.set(edgeKey(id, target, 'default_privilege'), {
            source: id,
            target,
            kind: 'default_privilege',
            label: change.privileges.join(', '),
            mark: 'removed',
          });
        }
        break;
      }
      default:
        break;
    }
  }

  const fold = nodes.size > DRAW_COLLAPSE_NODES;
  let folded = fold ? foldTargets(nodes, edges) : { nodes, edges };
  if (folded.nodes.size > DRAW_MEMBERSHIPS_ONLY_NODES) folded = membershipsOnly(folded.nodes, folded.edges);
  const total = folded.nodes.size;
  if (total > DRAW_MAX_NODES) folded = mostConnected(folded.nodes, folded.edges, artifact);
  return {
    ...place(folded.nodes, folded.edges, fold || visual.meta.collapsed),
    omittedNodes: total - folded.nodes.size,
  };
}

/**
 * Keeps the DRAW_MAX_NODES nodes a reviewer most needs: roles named by findings, then what the plan
 * changes, then the most connected; the report says how many were left out.
 */
function mostConnected(
  nodes: ReadonlyMap<string, WorkNode>,
  edges: ReadonlyMap<string, WorkEdge>,
  artifact: ReviewArtifact,
): { nodes: Map<string, WorkNode>; edges: Map<string, WorkEdge> } {
  const named = new Set(
    artifact.recorded.findings.flatMap((f) => (f.role ? [`role:${f.role}`, `external:${f.role}`] : [])),
  );
  const degree = new Map<string, number>();
  for (const e of edges.values()) {
    degree.set(e.source, (degree.get(e.source) ?? 0) + 1);
    degree.set(e.target, (degree.get(e.target) ?? 0) + 1);
  }
  const score = (n: WorkNode): number =>
    (named.has(n.id) ? 1_000_000 : 0) + (n.mark === 'removed' ? 100_000 : 0) + (degree.get(n.id) ?? 0);
  const ranked = [...nodes.values()].sort(
    (a, b) => score(b) - score(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const neighbours = new Map<string, string[]>();
  for (const e of edges.values()) {
    neighbours.set(e.source, [...(neighbours.get(e.source) ?? []), e.target]);
    neighbours.set(e.target, [...(neighbours.get(e.target) ?? []), e.source]);
  }
  // Grow neighbourhoods around the best seeds, so what is drawn keeps its edges.
  const ids = new Set<string>();
  for (const seed of ranked) {
    if (ids.size >= DRAW_MAX_NODES) break;
    const queue = [seed.id];
    while (queue.length > 0 && ids.size < DRAW_MAX_NODES) {
      const id = queue.shift()!;
      if (ids.has(id)) continue;
      ids.add(id);
      queue.push(...(neighbours.get(id) ?? []).filter((n) => !ids.has(n)).sort());
    }
  }
  const kept = ranked.filter((n) => ids.has(n.id));
  return {
    nodes: new Map(kept.map((n) => [n.id, n])),
    edges: new Map([...edges].filter(([, e]) => ids.has(e.source) && ids.has(e.target))),
  };
}

/**
 * The last resort for very large policies: only roles and their memberships are drawn (grant and default
 * targets are counted in each role's tooltip), and roles without any membership share one summary node.
 */
function membershipsOnly(
  nodes: ReadonlyMap<string, WorkNode>,
  edges: ReadonlyMap<string, WorkEdge>,
): { nodes: Map<string, WorkNode>; edges: Map<string, WorkEdge> } {
  const grants = new Map<string, number>();
  const connected = new Set<string>();
  const outEdges = new Map<string, WorkEdge>();
  for (const [key, e] of edges) {
    if (e.kind === 'membership') {
      outEdges.set(key, e);
      connected.add(e.source);
      connected.add(e.target);
    } else {
      const role = e.kind === 'grant' ? e.source : e.target;
      grants.set(role, (grants.get(role) ?? 0) + 1);
    }
  }
  const outNodes = new Map<string, WorkNode>();
  let alone = 0;
  let aloneMark: Mark = null;
  for (const n of nodes.values()) {
    if (n.kind !== 'role' && n.kind !== 'external_principal') continue;
    const detail = grants.has(n.id) ? `${grants.get(n.id)} grant target groups` : '';
    if (connected.has(n.id)) outNodes.set(n.id, { ...n, detail });
    else {
      alone++;
      if (n.mark !== null) aloneMark = aloneMark === 'added' || n.mark === 'added' ? 'added' : 'changed';
    }
  }
  if (alone > 0) {
    outNodes.set('summary:unconnected', {
      id: 'summary:unconnected',
      label: `${alone} roles without memberships`,
      kind: 'role',
      login: null,
      managed: null,
      detail: '',
      mark: aloneMark,
    });
  }
  return { nodes: outNodes, edges: outEdges };
}

/** Folds grant targets into one node per schema and default targets into one per (owner, scope). */
function foldTargets(
  nodes: ReadonlyMap<string, WorkNode>,
  edges: ReadonlyMap<string, WorkEdge>,
): { nodes: Map<string, WorkNode>; edges: Map<string, WorkEdge> } {
  const groupOf = (n: WorkNode): string | null => {
    if (n.kind === 'grant_target') {
      const [, type, schema] = n.id.split(':');
      return type === 'database' ? `fold:database` : `fold:schema:${schema ?? ''}`;
    }
    if (n.kind === 'default_privilege_target') {
      const [, owner, scope] = n.id.split(':');
      return `fold:default:${owner ?? ''}:${scope ?? ''}`;
    }
    return null;
  };
  const rank = (m: Mark): number => (m === 'added' ? 3 : m === 'removed' ? 2 : m === 'changed' ? 1 : 0);
  const strongest = (a: Mark, b: Mark): Mark => (rank(a) >= rank(b) ? a : b);
  const out = new Map<string, WorkNode>();
  const mapped = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const n of nodes.values()) {
    const group = groupOf(n);
    if (group === null) {
      out.set(n.id, n);
      mapped.set(n.id, n.id);
      continue;
    }
    mapped.set(n.id, group);
    counts.set(group, (counts.get(group) ?? 0) + 1);
    const existing = out.get(group);
    const parts = group.split(':');
    const label =
      parts[1] === 'schema'
        ? `schema ${parts[2]} objects`
        : parts[1] === 'database'
          ? 'database'
          : `defaults of ${parts[2]}${parts[3] === '(global)' ? '' : ` in ${parts[3]}`}`;
    out.set(group, {
      id: group,
      label,
      kind: n.kind,
      login: null,
      managed: null,
      detail: '',
      // A group that still holds live targets is changed, not removed, when one of them goes away.
      mark:
        existing === undefined
          ? n.mark
          : (existing.mark === 'removed') !== (n.mark === 'removed')
            ? 'changed'
            : strongest(existing.mark, n.mark),
    });
  }
  for (const [group, count] of counts) {
    const node = out.get(group)!;
    out.set(group, { ...node, detail: `${count} target${count === 1 ? '' : 's'}` });
  }
  const outEdges = new Map<string, WorkEdge>();
  for (const e of edges.values()) {
    const source = mapped.get(e.source) ?? e.source;
    const target = mapped.get(e.target) ?? e.target;
    const key = `${source}\u0000${target}\u0000${e.kind}`;
    const existing = outEdges.get(key);
    const labels = new Set([...(existing?.label.split(', ') ?? []), ...e.label.split(', ')].filter(Boolean));
    outEdges.set(key, {
      source,
      target,
      kind: e.kind,
      label: e.kind === 'membership' ? e.label : [...labels].sort().join(', '),
      mark: strongest(existing?.mark ?? null, e.mark),
    });
  }
  return { nodes: out, edges: outEdges };
}

/** Connected components (edges taken undirected), each as a list of node ids in input order. */
function components(nodes: ReadonlyMap<string, WorkNode>, edges: readonly WorkEdge[]): string[][] {
  const parent = new Map([...nodes.keys()].map((id) => [id, id]));
  const find = (id: string): string => {
    let root = id;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(id, root);
    return root;
  };
  for (const e of edges) parent.set(find(e.source), find(e.target));
  const groups = new Map<string, string[]>();
  for (const id of nodes.keys()) {
    const root = find(id);
    groups.set(root, [...(groups.get(root) ?? []), id]);
  }
  return [...groups.values()];
}

interface Placed {
  readonly nodes: DrawnNode[];
  readonly edges: DrawnEdge[];
  readonly width: number;
  readonly height: number;
}

/** Lays out one component with dagre, left to right (members, roles, targets). */
function layoutComponent(nodes: readonly WorkNode[], edges: readonly WorkEdge[]): Placed {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  // network-simplex ranking costs seconds on components of thousands of nodes; longest-path is linear.
  const ranker = nodes.length > LARGE_COMPONENT ? 'network-simplex' : 'network-simplex';
  g.setGraph({ rankdir: 'LR', nodesep: 10, ranksep: 110, edgesep: 6, marginx: 16, marginy: 16, ranker });
  g.setDefaultEdgeLabel(() => ({}));
  const size = (n: WorkNode): { width: number; height: number } => ({
    width: Math.min(
      300,
      Math.max(
        70,
        16 + n.label.length * 7.2 + (n.kind === 'role' ? 14 : 0),
        n.kind === 'role' ? 0 : 20 + Math.min(n.detail.length, 40) * 6,
      ),
    ),
    height: n.detail !== '' && n.kind !== 'role' ? 40 : 28,
  });
  for (const n of nodes) g.setNode(n.id, size(n));
  edges.forEach((e, i) => {
    // Defaults point from the target to the grantee; lay them out grantee-first like grants.
    if (e.kind === 'default_privilege') g.setEdge(e.target, e.source, {}, `e${i}`);
    else g.setEdge(e.source, e.target, {}, `e${i}`);
  });
  dagre.layout(g);
  const drawnNodes = nodes.map((n) => {
    const laid = g.node(n.id) as { x: number; y: number; width: number; height: number };
    return { ...n, x: laid.x, y: laid.y, width: laid.width, height: laid.height };
  });
  const drawnEdges = edges.map((e, i) => {
    const laid = (
      e.kind === 'default_privilege'
        ? g.edge(e.target, e.source, `e${i}`)
        : g.edge(e.source, e.target, `e${i}`)
    ) as { points?: { x: number; y: number }[] };
    const points = (laid.points ?? []).map((p) => ({ x: p.x, y: p.y }));
    return { ...e, points: e.kind === 'default_privilege' ? points.reverse() : points };
  });
  const graph = g.graph() as { width?: number; height?: number };
  return { nodes: drawnNodes, edges: drawnEdges, width: graph.width ?? 0, height: graph.height ?? 0 };
}

/**
 * Lays out each connected component with dagre and packs the components into rows (tallest first), so a
 * large policy reads as a wall of small pictures instead of one endless column.
 */
function place(
  nodes: ReadonlyMap<string, WorkNode>,
  edges: ReadonlyMap<string, WorkEdge>,
  collapsed: boolean,
): Omit<DrawnGraph, 'omittedNodes'> {
  const list = [...edges.values()];
  const laid = components(nodes, list).map((ids) => {
    const members = new Set(ids);
    return layoutComponent(
      ids.map((id) => nodes.get(id)!),
      list.filter((e) => members.has(e.source)),
    );
  });
  laid.sort((a, b) => b.height - a.height || b.width - a.width);
  const area = laid.reduce((sum, c) => sum + c.width * c.height, 0);
  const rowWidth = Math.max(Math.sqrt(area) * 1.7, ...laid.map((c) => c.width));
  const outNodes: DrawnNode[] = [];
  const outEdges: DrawnEdge[] = [];
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  let width = 0;
  for (const c of laid) {
    if (x > 0 && x + c.width > rowWidth) {
      x = 0;
      y += rowHeight;
      rowHeight = 0;
    }
    for (const n of c.nodes) {
      outNodes.push({
        ...n,
        x: round(n.x + x),
        y: round(n.y + y),
        width: round(n.width),
        height: round(n.height),
      });
    }
    for (const e of c.edges) {
      outEdges.push({ ...e, points: e.points.map((p) => ({ x: round(p.x + x), y: round(p.y + y) })) });
    }
    x += c.width;
    width = Math.max(width, x);
    rowHeight = Math.max(rowHeight, c.height);
  }
  return { nodes: outNodes, edges: outEdges, width: round(width), height: round(y + rowHeight), collapsed };
}
