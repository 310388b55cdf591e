// Marks what the plan adds, changes and removes on the artifact's role graph, read from recorded.changes;
// what a plan removes is no longer in the graph, so it comes back as a "removed" ghost node or edge.

import type { ArtifactChange, ReviewArtifact, VisualEdge } from '../artifact.schema.js';
import { edgeKey, type Mark, type WorkEdge, type WorkGraph, type WorkNode } from './graph-model.js';

type GrantChange = Extract<ArtifactChange, { kind: 'grant' | 'revoke' }>;
type DefaultChange = Extract<ArtifactChange, { kind: 'set_default_privilege' | 'revoke_default_privilege' }>;

/** Where a grant change lands in the visual graph: (principal name, target id prefix). */
function grantTarget(change: GrantChange): string {
  if (change.object_type === 'schema' || change.object_type === 'database') {
    return `grant:${change.object_type}:${change.name ?? ''}:${change.name ?? ''}`;
  }
  const name = change.name === '*' || change.name == null ? '' : change.name;
  return `grant:${change.object_type}:${change.schema ?? ''}:${name}`;
}

function defaultTarget(change: DefaultChange): string {
  const scope = change.scope.type === 'global' ? '(global)' : change.scope.schema;
  return `default:${change.owner}:${scope}:${change.on_type}:${change.grantee}`;
}

function principalId(name: string, roles: ReadonlySet<string>): string {
  return roles.has(name) ? `role:${name}` : `external:${name}`;
}

/** The graph being marked, with the few ways a change marks it. */
class Marker implements WorkGraph {
  readonly nodes = new Map<string, WorkNode>();
  readonly edges = new Map<string, WorkEdge>();
  /** Edge keys per source, so marking stays linear in plan size (edges added later are never marked again). */
  private readonly bySource = new Map<string, string[]>();

  constructor(
    artifact: ReviewArtifact,
    readonly roles: ReadonlySet<string>,
  ) {
    const visual = artifact.recorded.visual;
    for (const n of visual.nodes) {
      const { id, label, kind, login, managed } = n;
      this.nodes.set(id, { id, label, kind, login, managed, detail: n.privileges.join(', '), mark: null });
    }
    for (const e of visual.edges) this.edges.set(edgeKey(e.source, e.target, e.kind), { ...e, mark: null });
    for (const [key, e] of this.edges)
      this.bySource.set(e.source, [...(this.bySource.get(e.source) ?? []), key]);
  }

  markNode(id: string, mark: Mark, ghost?: Omit<WorkNode, 'mark'>): void {
    const node = this.nodes.get(id);
    if (node !== undefined) {
      if (node.mark === null || mark === 'added') this.nodes.set(id, { ...node, mark });
    } else if (ghost !== undefined) this.nodes.set(id, { ...ghost, mark: 'removed' });
  }

  /** A principal the graph no longer has, drawn as removed; returns its id. */
  ghostPrincipal(name: string): string {
    const id = principalId(name, this.roles);
    const kind = this.roles.has(name) ? 'role' : 'external_principal';
    this.markNode(id, 'removed', { id, label: name, kind, login: null, managed: null, detail: '' });
    return id;
  }

  /** The principal's node id, as a removed ghost when the graph no longer has it. */
  principal(name: string): string {
    const id = principalId(name, this.roles);
    return this.nodes.has(id) ? id : this.ghostPrincipal(name);
  }

  /** Marks the source's edges of a kind to a target (or to targets under a prefix); true when one matched. */
  markEdges(
    source: string,
    targetPrefix: string,
    kind: VisualEdge['kind'],
    mark: Mark,
    exact: boolean,
  ): boolean {
    let found = false;
    for (const key of this.bySource.get(source) ?? []) {
      const e = this.edges.get(key)!;
      const match =
        e.kind === kind && (exact ? e.target === targetPrefix : e.target.startsWith(targetPrefix));
      if (!match) continue;
      found = true;
      if (e.mark !== 'added') this.edges.set(key, { ...e, mark });
    }
    return found;
  }

  removedEdge(source: string, target: string, kind: VisualEdge['kind'], label: string): void {
    this.edges.set(edgeKey(source, target, kind), { source, target, kind, label, mark: 'removed' });
  }
}

function markGrant(marker: Marker, change: GrantChange, collapsed: boolean): void {
  const source = principalId(change.role, marker.roles);
  const prefix = grantTarget(change);
  const mark = change.kind === 'grant' ? 'added' : 'changed';
  const exact =
    change.object_type === 'schema' ||
    change.object_type === 'database' ||
    (change.name != null && change.name !== '*');
  const hit =
    marker.markEdges(source, prefix, 'grant', mark, exact && !collapsed) ||
    (collapsed &&
      marker.markEdges(source, `grant:${change.object_type}:${change.schema ?? ''}:`, 'grant', mark, false));
  if (hit || change.kind !== 'revoke') return;
  const from = marker.nodes.has(source) ? source : marker.ghostPrincipal(change.role);
  const targetId = exact ? prefix : `${prefix}*`;
  marker.markNode(targetId, 'removed', {
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
  marker.removedEdge(from, targetId, 'grant', change.privileges.join(', '));
}

function markDefault(marker: Marker, change: DefaultChange): void {
  const id = defaultTarget(change);
  if (marker.nodes.has(id)) {
    const mark = change.kind === 'set_default_privilege' ? 'added' : 'changed';
    marker.markNode(id, mark);
    for (const [key, e] of marker.edges) if (e.source === id) marker.edges.set(key, { ...e, mark });
  } else if (change.kind === 'revoke_default_privilege') {
    marker.markNode(id, 'removed', {
      id,
      label: `new ${change.on_type}s by ${change.owner}${change.scope.type === 'global' ? '' : ` in ${change.scope.schema}`}`,
      kind: 'default_privilege_target',
      login: null,
      managed: null,
      detail: change.privileges.join(', '),
    });
    marker.removedEdge(
      id,
      marker.principal(change.grantee),
      'default_privilege',
      change.privileges.join(', '),
    );
  }
}

/** The artifact's visual graph with every node and edge the plan touches marked, removed ones as ghosts. */
export function markedGraph(artifact: ReviewArtifact): WorkGraph {
  const visual = artifact.recorded.visual;
  const marker = new Marker(
    artifact,
    new Set(visual.nodes.filter((n) => n.kind === 'role').map((n) => n.label)),
  );
  const roles = marker.roles;
  const added = new Set(
    artifact.recorded.changes.flatMap((c) =>
      c.change.kind === 'add_member' ? [`${c.change.role}\u0000${c.change.member}`] : [],
    ),
  );
  for (const { change } of artifact.recorded.changes) {
    switch (change.kind) {
      case 'create_role':
        marker.markNode(`role:${change.name}`, 'added');
        break;
      case 'drop_role':
        marker.ghostPrincipal(change.name);
        break;
      case 'alter_role':
      case 'set_password':
      case 'set_comment':
        marker.markNode(`role:${change.name}`, 'changed');
        break;
      case 'add_member':
        marker.markEdges(
          principalId(change.member, roles),
          principalId(change.role, roles),
          'membership',
          'added',
          true,
        );
        break;
      case 'remove_member': {
        if (added.has(`${change.role}\u0000${change.member}`)) break;
        const source = marker.principal(change.member);
        marker.removedEdge(source, marker.principal(change.role), 'membership', 'member');
        break;
      }
      case 'grant':
      case 'revoke':
        markGrant(marker, change, visual.meta.collapsed);
        break;
      case 'set_default_privilege':
      case 'revoke_default_privilege':
        markDefault(marker, change);
        break;
      default:
        break;
    }
  }
  return { nodes: marker.nodes, edges: marker.edges };
}
