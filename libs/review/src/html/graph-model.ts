// The role graph as the HTML report draws it: the drawn shapes (with dagre coordinates) and the working
// form the marking and reducing steps pass between them, before anything is placed.

import type { VisualEdge, VisualNode } from '../artifact.schema.js';

/** What the plan does to a node or edge: adds it, changes it, removes it, or nothing. */
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

export type WorkNode = Omit<DrawnNode, 'x' | 'y' | 'width' | 'height'>;
export type WorkEdge = Omit<DrawnEdge, 'points'>;

/** Nodes by id and edges by `edgeKey`, before placement. */
export interface WorkGraph {
  readonly nodes: Map<string, WorkNode>;
  readonly edges: Map<string, WorkEdge>;
}

/** One edge per (source, target, kind). */
export const edgeKey = (source: string, target: string, kind: string): string =>
  `${source}\u0000${target}\u0000${kind}`;
