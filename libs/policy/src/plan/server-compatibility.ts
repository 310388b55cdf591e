// Version rules a plan meets before it is applied (engine notes 2.3 and 2.8, docs/postgres-versions.md):
// what the server cannot express or the executor cannot do becomes a blocker naming the rule, instead of a
// plan that repeats on every cycle without effect.

import type { Change } from '../model/change.js';
import type { DesiredState } from '../model/desired.js';
import type { CatalogSnapshot } from '../model/snapshot.js';

const PG16 = 160000;

/**
 * Predefined roles added after PostgreSQL 14 (the oldest supported major), with the major that added them:
 * a membership in one the server lacks would fail at apply.
 */
export const PREDEFINED_ROLE_SINCE: Readonly<Record<string, number>> = {
  pg_checkpoint: 15,
  pg_create_subscription: 16,
  pg_use_reserved_connections: 16,
  pg_maintain: 17,
  pg_signal_autovacuum_worker: 18,
};

/** The blocker text for a membership in a predefined role the server does not have yet. */
export function missingPredefinedRoleBlocker(role: string, since: number, serverVersionNum: number): string {
  const major = Math.floor(serverVersionNum / 10000);
  return `predefined role ${role} does not exist on PostgreSQL ${major}: it was added in PostgreSQL ${since}`;
}

/** The blocker text for a per-membership inherit option a server older than 16 cannot store. */
export function perEdgeInheritBlocker(
  role: string,
  member: string,
  inherit: boolean,
  memberInherit: boolean,
  serverVersionNum: number,
): string {
  const major = Math.floor(serverVersionNum / 10000);
  return (
    `membership ${role} -> ${member} declares inherit: ${inherit}, but PostgreSQL ${major} has no ` +
    `per-membership inherit option (PostgreSQL 16+): the role-level inherit of ${member} ` +
    `(${memberInherit}) applies to all its memberships; declare inherit: ${memberInherit} on this ` +
    `membership or set inherit: ${inherit} on role ${member}`
  );
}

/** The blocker text for a PG16+ membership row the executor cannot revoke (granted by someone else). */
export function foreignGrantorBlocker(
  role: string,
  member: string,
  grantor: string | null,
  executor: string,
): string {
  const by = grantor === null ? 'the bootstrap superuser' : grantor;
  return (
    `membership ${role} -> ${member} was granted by ${by}; on PostgreSQL 16+ only a role with the ` +
    `privileges of ${by} can revoke it, and executor ${executor} has not: revoke it as ` +
    `${grantor === null ? 'a superuser' : `${grantor} or a superuser`}`
  );
}

/**
 * server_compatibility blockers of a plan: memberships in a predefined role newer than the server; on PostgreSQL < 16, declared `inherit: false` memberships of a
 * member whose role-level inherit is true (the only inherit such a server has); on 16+, planned membership
 * removals of rows granted by a role a non-superuser executor cannot act as (the REVOKE would only warn).
 */
export function serverCompatibilityBlockers(
  desired: DesiredState,
  snapshot: CatalogSnapshot,
  changes: readonly Change[],
): string[] {
  const version = snapshot.server_version_num;
  const blockers: string[] = [];
  const existing = new Set(snapshot.existing_roles);
  for (const role of new Set(desired.memberships.map((m) => m.role))) {
    const since = PREDEFINED_ROLE_SINCE[role];
    if (since !== undefined && Math.floor(version / 10000) < since && !existing.has(role))
      blockers.push(missingPredefinedRoleBlocker(role, since, version));
  }
  if (version < PG16) {
    const declared = new Map(desired.roles.filter((r) => !r.external).map((r) => [r.name, r.state.inherit]));
    const live = new Map(snapshot.roles.map((r) => [r.name, r.state.inherit]));
    for (const edge of desired.memberships) {
      // Only `inherit: false` is a per-membership option one can tell apart: `true` is also the resolved
      // default, and a NOINHERIT member's plain membership is the ordinary PG < 16 way to say "no inherit".
      const memberInherit = declared.get(edge.member) ?? live.get(edge.member);
      if (!edge.inherit && memberInherit === true)
        blockers.push(perEdgeInheritBlocker(edge.role, edge.member, edge.inherit, memberInherit, version));
    }
    return blockers;
  }
  const { executor } = snapshot;
  if (executor.superuser) return blockers;
  const actsAs = new Set([executor.role, ...executor.member_of]);
  for (const change of changes) {
    if (change.kind !== 'remove_member') continue;
    if (change.grantor !== null && actsAs.has(change.grantor)) continue;
    blockers.push(foreignGrantorBlocker(change.role, change.member, change.grantor, executor.role));
  }
  return blockers;
}
