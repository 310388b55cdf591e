// Keeps the role graph drawable: above a size, grant and default targets fold per schema, then only roles
// and memberships are drawn, and at most DRAW_MAX_NODES nodes, chosen for what a reviewer most needs.

import type { ReviewArtifact } from '../artifact.schema.js';
import { edgeKey, type Mark, type WorkEdge, type WorkGraph, type WorkNode } from './graph-model.js';

/** Above this many nodes the drawing folds grant and default targets per schema. */
export const DRAW_COLLAPSE_NODES = 260;
/** Above this many nodes after folding, only roles and memberships are drawn. */
export const DRAW_MEMBERSHIPS_ONLY_NODES = 600;
/** The most nodes ever drawn; beyond that the most relevant are kept (dagre needs seconds per thousand). */
export const DRAW_MAX_NODES = 400;

export interface ReducedGraph extends WorkGraph {
  /** True when targets were folded per schema. */
  readonly folded: boolean;
  /** Nodes left out of the drawing (0 when everything is drawn). */
  readonly omittedNodes: number;
}

/** The marked graph reduced to what can be drawn readably. */
export function reduceForDrawing(graph: WorkGraph, artifact: ReviewArtifact): ReducedGraph {
  const folded = graph.nodes.size > DRAW_COLLAPSE_NODES;
  let reduced = folded ? foldTargets(graph.nodes, graph.edges) : graph;
  if (reduced.nodes.size > DRAW_MEMBERSHIPS_ONLY_NODES)
    reduced = membershipsOnly(reduced.nodes, reduced.edges);
  const total = reduced.nodes.size;
  if (total > DRAW_MAX_NODES) reduced = mostConnected(reduced.nodes, reduced.edges, artifact);
  return { nodes: reduced.nodes, edges: reduced.edges, folded, omittedNodes: total - reduced.nodes.size };
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
    const key = edgeKey(source, target, e.kind);
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
