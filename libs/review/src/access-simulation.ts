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

/** Roles reachable from `from` over membership edges (`inheritOnly`: inherit edges only), `from` included. */
export function reachableFrom(
  memberships: readonly MembershipEdge[],
  from: string,
  inheritOnly: boolean,
): Set<string> {
  const byMember = new Map<string, MembershipEdge[]>();
  for (const e of memberships) {
    if (inheritOnly && !e.inherit) continue;
    const list = byMember.get(e.member);
    if (list === undefined) byMember.set(e.member, [e]);
    else list.push(e);
  }
  const seen = new Set([from]);
  const queue = [from];
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
  const member = reachableFrom(snapshot.memberships, executor.role, false);
  const usage = reachableFrom(snapshot.memberships, executor.role, true);
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
 * applyChanges plus the membership PostgreSQL 16+ records implicitly when a non-superuser (CREATEROLE)
 * executor creates a role: created role -> executor, ADMIN, no INHERIT/SET, granted by the bootstrap
 * superuser. The engine's interpreter leaves it out (inspection treats it as unmanaged), but it is what
 * gives the executor authority over the roles it creates, so the review's access simulation needs it.
 */
export function applyForReview(snapshot: CatalogSnapshot, changes: readonly Change[]): CatalogSnapshot {
  const after = applyChanges(snapshot, changes);
  if (snapshot.server_version_num < 160000 || snapshot.executor.superuser) return after;
  const executor = snapshot.executor.role;
  const implicit = changes.flatMap((c): MembershipEdge[] =>
    c.kind === 'create_role'
      ? [{ role: c.name, member: executor, inherit: false, admin: true, grantor: null }]
      : [],
  );
  return implicit.length === 0 ? after : withExecutorEdges(after, implicit);
}

/**
 * Simulates the plan phase by phase. `complete` is whether the executor's whole membership graph is known
 * (its edges were read and the intended executor is the inspecting role); otherwise statuses are `unknown`.
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
  for (const phase of phases) {
    current = applyForReview(
      current,
      phase.change_indices.map((i) => changes[i]!),
    );
    afterPhase.push(accessState(current, tracked, executor, complete));
  }
  return { before, afterPhase, complete };
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
