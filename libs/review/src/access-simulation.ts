// Executor access before the plan and after each phase, on the simulated membership graph (engine notes
// 6.3): reachable = a membership path (pg_has_role MEMBER) or superuser; usage = a path of inherit edges.

import {
  applyChanges,
  compareCodePoints,
  PUBLIC_GRANTEE,
  type CatalogSnapshot,
  type Change,
  type MembershipEdge,
  type PlanPhase,
} from '@rolepolicy/policy';

import type { AccessDelta, AccessStatus, Identity } from './artifact.schema.js';

/** Access of the executor to every tracked role at one point of the plan. */
export interface AccessState {
  readonly reachability: ReadonlyMap<string, AccessStatus>;
  readonly usage: ReadonlyMap<string, AccessStatus>;
  /** The simulated state (memberships include the executor's own edges). */
  readonly snapshot: CatalogSnapshot;
}

/** The simulation's result: the state before the plan, and after each phase (same order as phases). */
export interface AccessTimeline {
  readonly before: AccessState;
  readonly afterPhase: readonly AccessState[];
  readonly complete: boolean;
}

function edgeKey(edge: MembershipEdge): string {
  return `${edge.role}\u0000${edge.member}\u0000${edge.grantor ?? ''}`;
}

/** The snapshot's edges plus the executor's own edges, de-duplicated. */
export function withExecutorEdges(
  snapshot: CatalogSnapshot,
  executorEdges: readonly MembershipEdge[],
): CatalogSnapshot {
  const edges = new Map(snapshot.memberships.map((e) => [edgeKey(e), e]));
  for (const e of executorEdges) if (!edges.has(edgeKey(e))) edges.set(edgeKey(e), e);
  return { ...snapshot, memberships: [...edges.values()] };
}

/**
 * The facts' edges that can decide the artifact (ADR 0028): those on a path from `inspector` (the role that
 * read them) up to one of `targets` (the roles the artifact tracks and the privileged predefined roles its
 * findings look for), over the snapshot's edges and these. Any other edge decides no status or finding and
 * names roles outside the plan: a superuser's catalog read once returned every membership of the server, and
 * on PostgreSQL 16 a CREATEROLE executor is an ADMIN member of every role it created, every tenant's.
 */
export function executorScopedEdges(
  snapshot: CatalogSnapshot,
  inspector: string,
  executorEdges: readonly MembershipEdge[],
  targets: ReadonlySet<string>,
): MembershipEdge[] {
  if (executorEdges.length === 0) return [];
  const graph = [...snapshot.memberships, ...executorEdges];
  const up = reachableFrom(graph, inspector, false);
  const upward = executorEdges.filter((e) => up.has(e.member));
  if (upward.length === 0) return [];
  // Every edge of a path from the inspector has its member on the way up: walk only those, downwards (group
  // to member) from the targets, for the roles from which a target is reachable.
  const reversed = graph.flatMap((e) => (up.has(e.member) ? [{ ...e, role: e.member, member: e.role }] : []));
  const down = reachableFromAny(reversed, targets, false);
  return upward.filter((e) => down.has(e.role));
}

/** Roles reachable from `from` over membership edges (`inheritOnly`: inherit edges only), `from` included. */
export function reachableFrom(
  memberships: readonly MembershipEdge[],
  from: string,
  inheritOnly: boolean,
): Set<string> {
  return reachableFromAny(memberships, [from], inheritOnly);
}

/** Roles reachable from any of `starts` (one walk, however many starts), the starts included. */
function reachableFromAny(
  memberships: readonly MembershipEdge[],
  starts: Iterable<string>,
  inheritOnly: boolean,
): Set<string> {
  const byMember = new Map<string, MembershipEdge[]>();
  for (const e of memberships) {
    if (inheritOnly && !e.inherit) continue;
    const list = byMember.get(e.member);
    if (list === undefined) byMember.set(e.member, [e]);
    else list.push(e);
  }
  const seen = new Set(starts);
  const queue = [...seen];
  while (queue.length > 0) {
    const current = queue.pop()!;
    for (const e of byMember.get(current) ?? []) {
      if (!seen.has(e.role)) {
        seen.add(e.role);
        queue.push(e.role);
      }
    }
  }
  return seen;
}

function existingRoles(snapshot: CatalogSnapshot): Set<string> {
  return new Set([...snapshot.existing_roles, ...snapshot.roles.map((r) => r.name)]);
}

function accessState(
  snapshot: CatalogSnapshot,
  tracked: readonly string[],
  executor: Identity,
  complete: boolean,
): AccessState {
  const existing = existingRoles(snapshot);
  // A superuser reaches every role and an incomplete graph decides none: only otherwise are paths read
  // (a superuser's graph is every membership of the server, so this is most of the simulation's work).
  const pathsRead = executor.superuser !== true && complete;
  const member = pathsRead ? reachableFrom(snapshot.memberships, executor.role, false) : new Set<string>();
  const usage = pathsRead ? reachableFrom(snapshot.memberships, executor.role, true) : new Set<string>();
  const status = (role: string, set: Set<string>): AccessStatus => {
    if (executor.superuser === true || role === executor.role) return 'reachable';
    if (!complete) return 'unknown';
    return set.has(role) ? 'reachable' : 'unreachable';
  };
  const reachability = new Map<string, AccessStatus>();
  const usageMap = new Map<string, AccessStatus>();
  for (const role of tracked) {
    if (!existing.has(role) && role !== executor.role) continue;
    reachability.set(role, status(role, member));
    usageMap.set(role, status(role, usage));
  }
  return { reachability, usage: usageMap, snapshot };
}

/** Every role name a change mentions (PUBLIC excluded). */
export function rolesOf(change: Change): readonly string[] {
  switch (change.kind) {
    case 'create_role':
    case 'alter_role':
    case 'set_comment':
    case 'set_password':
    case 'drop_role':
      return [change.name];
    case 'create_schema':
      return change.owner === null ? [] : [change.owner];
    case 'alter_schema_owner':
    case 'ensure_schema_owner_privileges':
      return [change.owner];
    case 'grant':
      return change.role === PUBLIC_GRANTEE ? [] : [change.role];
    case 'revoke':
      return [change.role, change.grantor].filter((r): r is string => r !== null && r !== PUBLIC_GRANTEE);
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      return [change.owner, change.grantee].filter((r) => r !== PUBLIC_GRANTEE);
    case 'add_member':
      return [change.role, change.member];
    case 'remove_member':
      return [change.role, change.member, change.grantor].filter((r): r is string => r !== null);
    case 'reassign_owned':
      return [change.from_role, change.to_role];
    case 'drop_owned':
    case 'terminate_sessions':
      return [change.role];
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/**
 * The change kinds that alter what an access state reads (roles, which roles exist, memberships). The
 * others (grants, defaults, schemas, ownership, passwords, sessions) leave those untouched in applyChanges.
 */
const ROLE_GRAPH_KINDS: ReadonlySet<Change['kind']> = new Set([
  'create_role',
  'alter_role',
  'set_comment',
  'drop_role',
  'add_member',
  'remove_member',
]);

/**
 * Simulates the plan phase by phase on a role slice (`snapshot` without grants, defaults, schemas and
 * inventory; the states read only roles and memberships). `complete` is whether the executor's whole
 * membership graph is known (its edges were read and the intended executor is the inspecting role);
 * otherwise statuses are `unknown`.
 *
 * Only the changes of ROLE_GRAPH_KINDS are applied. A phase without any (grants, revokes, retirement
 * steps) keeps the previous state, once applyChanges has run at all: on its own output it only re-sorts,
 * and before PostgreSQL 16 its first run also aligns each edge's inherit with its member's rolinherit.
 */
export function simulateAccess(
  snapshot: CatalogSnapshot,
  changes: readonly Change[],
  phases: readonly PlanPhase[],
  tracked: readonly string[],
  executor: Identity,
  complete: boolean,
): AccessTimeline {
  const before = accessState(snapshot, tracked, executor, complete);
  const afterPhase: AccessState[] = [];
  let current = snapshot;
  let state: AccessState | null = null;
  for (const phase of phases) {
    const phaseChanges = phase.change_indices
      .map((i) => changes[i]!)
      .filter((c) => ROLE_GRAPH_KINDS.has(c.kind));
    if (state === null || phaseChanges.length > 0) {
      const applied = withCreatorEdges(applyChanges(current, phaseChanges), phaseChanges, executor);
      // New roles' built-in PUBLIC defaults are not read here: do not carry them from phase to phase.
      current = { ...applied, default_privileges: [] };
      state = accessState(current, tracked, executor, complete);
    }
    afterPhase.push(state);
  }
  return { before, afterPhase, complete };
}

/**
 * The server's implicit edge of PostgreSQL 16+: a role created by a non-superuser CREATEROLE executor gets
 * that executor as a member with ADMIN OPTION (no INHERIT). The engine's interpreter leaves it out, as
 * inspection does (it is not managed); the executor's access depends on it, so the simulation adds it.
 */
export function withCreatorEdges(
  snapshot: CatalogSnapshot,
  changes: readonly Change[],
  executor: Identity,
): CatalogSnapshot {
  if (snapshot.server_version_num < 160000 || executor.superuser === true) return snapshot;
  const created = changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : []));
  if (created.length === 0) return snapshot;
  const edges = created.map((role) => ({
    role,
    member: executor.role,
    inherit: false,
    admin: true,
    grantor: null,
  }));
  return { ...snapshot, memberships: [...snapshot.memberships, ...edges] };
}

/** The spec's delta between two states: changed entries sorted by role, removed roles sorted. */
export function accessDelta(
  previous: ReadonlyMap<string, AccessStatus>,
  next: ReadonlyMap<string, AccessStatus>,
): AccessDelta {
  const changed = [...next]
    .filter(([role, status]) => previous.get(role) !== status)
    .map(([role, status]) => ({ role, status }))
    .sort((a, b) => compareCodePoints(a.role, b.role));
  const removed = [...previous.keys()].filter((role) => !next.has(role)).sort(compareCodePoints);
  return { changed, removed };
}
