// Lays out the artifact's role graph for the HTML report with dagre (at generation time, so the report needs
// no script to draw it): the plan's marks (graph-marks.ts), reduced to what is drawable (graph-reduce.ts),
// each connected component placed by dagre and the components packed into rows.

import dagre from '@dagrejs/dagre';

import type { ReviewArtifact } from '../artifact.schema.js';
import { markedGraph } from './graph-marks.js';
import type { DrawnEdge, DrawnGraph, DrawnNode, WorkEdge, WorkNode } from './graph-model.js';
import { reduceForDrawing } from './graph-reduce.js';

export type { DrawnEdge, DrawnGraph, DrawnNode, Mark } from './graph-model.js';
export { DRAW_COLLAPSE_NODES, DRAW_MAX_NODES, DRAW_MEMBERSHIPS_ONLY_NODES } from './graph-reduce.js';

/** Components above this many nodes are ranked with dagre's linear longest-path ranker. */
const LARGE_COMPONENT = 150;

const round = (n: number): number => Math.round(n * 10) / 10;

/** The drawable graph of an artifact: nodes and edges with marks and dagre coordinates. */
export function layoutRoleGraph(artifact: ReviewArtifact): DrawnGraph {
  const reduced = reduceForDrawing(markedGraph(artifact), artifact);
  return {
    ...place(reduced.nodes, reduced.edges, reduced.folded || artifact.recorded.visual.meta.collapsed),
    omittedNodes: reduced.omittedNodes,
  };
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
