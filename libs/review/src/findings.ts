// recorded.findings[]: advisory problems a reviewer should see before approving, each tied to the changes
// and phase that cause it. Pure functions of the plan, the snapshot, the facts and the access timeline.

import { compareCodePoints, type Change, type MembershipEdge } from '@rolepolicy/policy';

import { FINDING_KINDS, SEVERITIES, type Finding, type Severity } from './artifact.schema.js';
import { reachableFrom, rolesOf } from './access-simulation.js';
import {
  authorityNeeds,
  createdRoles,
  existingBefore,
  isPredefined,
  phaseIndexOf,
  verifiedNames,
  type Analysis,
} from './review-context.js';

/** Predefined roles that carry server-level power (file access, program execution, all data, signals). */
export const PRIVILEGED_PREDEFINED: ReadonlySet<string> = new Set([
  'pg_execute_server_program',
  'pg_read_server_files',
  'pg_write_server_files',
  'pg_read_all_data',
  'pg_write_all_data',
  'pg_signal_backend',
  'pg_checkpoint',
  'pg_create_subscription',
  'pg_database_owner',
]);

const list = (names: Iterable<string>): string => [...names].map((n) => `"${n}"`).join(', ');

function finding(
  kind: Finding['kind'],
  severity: Severity,
  message: string,
  indices: readonly number[],
  extra: { phase?: Finding['phase']; role?: string | null } = {},
): Finding {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  return {
    kind,
    severity,
    message,
    change_index: sorted[0] ?? null,
    change_indices: sorted,
    ...(extra.phase !== undefined ? { phase: extra.phase } : {}),
    ...(extra.role !== undefined ? { role: extra.role } : {}),
  };
}

/** Roles a change refers to that must exist when it runs (the role acted upon is checked elsewhere). */
function requiredRoles(change: Change): readonly string[] {
  switch (change.kind) {
    case 'create_role':
    case 'set_password':
    case 'drop_role':
    case 'alter_role':
    case 'set_comment':
    case 'drop_owned':
    case 'terminate_sessions':
      return [];
    case 'reassign_owned':
      return [change.to_role];
    default:
      return rolesOf(change);
  }
}

function missingRoles(a: Analysis, out: Finding[]): void {
  const existing = existingBefore(a.snapshot);
  const created = createdRoles(a.changes);
  const verified = verifiedNames(a.scope);
  const missing = new Map<string, number[]>();
  const unverified = new Map<string, number[]>();
  a.changes.forEach((change, index) => {
    for (const role of requiredRoles(change)) {
      if (existing.has(role) || created.has(role)) continue;
      const bucket = verified.has(role) || isPredefined(role) ? missing : unverified;
      bucket.set(role, [...(bucket.get(role) ?? []), index]);
    }
  });
  for (const [role, indices] of missing) {
    out.push(
      finding(
        'required_role_unavailable',
        'error',
        `role "${role}" does not exist and this plan does not create it` +
          (isPredefined(role) ? ' (a predefined role this server does not have)' : ''),
        indices,
        { role },
      ),
    );
  }
  for (const [role, indices] of unverified) {
    out.push(
      finding(
        'required_role_reachability_unknown',
        'warning',
        `role "${role}" is not declared by the policy, so inspection did not confirm that it exists`,
        indices,
        { role },
      ),
    );
  }
}

function executorAccess(a: Analysis, out: Finding[]): void {
  if (a.executor.superuser === true) return;
  const phaseOf = phaseIndexOf(a.phases);
  const lost = new Map<string, { phase: number; role: string; access: string; needers: number[] }>();
  const unknown = new Map<string, number[]>();
  a.changes.forEach((change, index) => {
    const p = phaseOf[index]!;
    for (const need of authorityNeeds(change)) {
      const map = need.access === 'usage' ? 'usage' : 'reachability';
      const before = a.timeline.before[map].get(need.role);
      const atChange = (p === 0 ? a.timeline.before : a.timeline.afterPhase[p - 1]!)[map].get(need.role);
      if (before === 'unknown' || atChange === 'unknown') {
        unknown.set(need.role, [...(unknown.get(need.role) ?? []), index]);
        continue;
      }
      if (before !== 'reachable' || atChange === 'reachable') continue;
      // The executor had it before the plan and an earlier phase took it away.
      let losing = 0;
      while (losing < p && a.timeline.afterPhase[losing]![map].get(need.role) === 'reachable') losing++;
      const key = `${need.role}\u0000${need.access}\u0000${losing}`;
      const entry = lost.get(key) ?? { phase: losing, role: need.role, access: need.access, needers: [] };
      entry.needers.push(index);
      lost.set(key, entry);
    }
  });
  for (const { phase, role, access, needers } of lost.values()) {
    const phaseName = a.phases[phase]!.phase;
    const cause = a.phases[phase]!.change_indices.filter((i) => {
      const c = a.changes[i]!;
      return c.kind === 'remove_member' || c.kind === 'drop_role' || c.kind === 'alter_role';
    });
    out.push(
      finding(
        'executor_loses_access',
        'error',
        `phase ${phaseName} takes away the executor's ${access === 'usage' ? 'privileges of' : 'membership in'} ` +
          `role "${role}", which change${needers.length > 1 ? 's' : ''} ${needers.join(', ')} later in the plan need`,
        needers,
        { phase: phaseName, role },
      ),
    );
    const last = out[out.length - 1]!;
    out[out.length - 1] = { ...last, change_index: cause[0] ?? last.change_index };
  }
  for (const [role, indices] of unknown) {
    out.push(
      finding(
        'required_role_reachability_unknown',
        'warning',
        `whether the executor "${a.executor.role}" can act as "${role}" is unknown: its membership graph was not read`,
        indices,
        { role },
      ),
    );
  }
}

function removedEdges(a: Analysis): { index: number; role: string; member: string }[] {
  const readded = new Set(
    a.changes.flatMap((c) => (c.kind === 'add_member' ? [`${c.role}\u0000${c.member}`] : [])),
  );
  return a.changes.flatMap((c, index) =>
    c.kind === 'remove_member' && !readded.has(`${c.role}\u0000${c.member}`)
      ? [{ index, role: c.role, member: c.member }]
      : [],
  );
}

function disconnections(a: Analysis, out: Finding[]): void {
  const removals = removedEdges(a);
  if (removals.length === 0) return;
  const after = a.timeline.afterPhase.at(-1)?.snapshot ?? a.snapshot;
  const groups = new Set(a.desired.roles.filter((r) => !r.external && !r.state.login).map((r) => r.name));
  const loginAfter = new Map(after.roles.map((r) => [r.name, r.state.login]));
  const loginBefore = new Map(a.snapshot.roles.map((r) => [r.name, r.state.login]));
  const byMember = new Map<string, number[]>();
  for (const r of removals) byMember.set(r.member, [...(byMember.get(r.member) ?? []), r.index]);
  const dropped = new Set(a.changes.flatMap((c) => (c.kind === 'drop_role' ? [c.name] : [])));
  for (const [member, indices] of byMember) {
    if (dropped.has(member)) continue;
    const isExecutor = member === a.executor.role;
    const login = loginAfter.get(member) ?? loginBefore.get(member) ?? isExecutor;
    if (!login) continue;
    const reachBefore = reachableFrom(a.snapshot.memberships, member, false);
    const reachAfter = reachableFrom(after.memberships, member, false);
    const hadGroup = [...groups].some((g) => reachBefore.has(g));
    const hasGroup = [...groups].some((g) => g !== member && reachAfter.has(g));
    if (!hadGroup || hasGroup) continue;
    out.push(
      finding(
        'membership_disconnects_role',
        'warning',
        `after this plan, login role "${member}"${isExecutor ? ' (the executor)' : ''} is no longer a member of any ` +
          `role the policy manages`,
        indices,
        { phase: 'membership_remove', role: member },
      ),
    );
  }
}

function privilegedRoles(a: Analysis, memberships: readonly MembershipEdge[]): Set<string> {
  const after = a.timeline.afterPhase.at(-1)?.snapshot ?? a.snapshot;
  const out = new Set<string>();
  for (const r of after.roles) {
    const s = r.state;
    if (s.superuser || s.createrole || s.bypassrls || s.replication) out.add(r.name);
  }
  for (const e of memberships) if (PRIVILEGED_PREDEFINED.has(e.role)) out.add(e.role);
  return out;
}

function newPaths(a: Analysis, out: Finding[]): void {
  const adds = a.changes.flatMap((c, index) => (c.kind === 'add_member' ? [{ c, index }] : []));
  if (adds.length === 0) return;
  const after = a.timeline.afterPhase.at(-1)?.snapshot ?? a.snapshot;
  const privileged = privilegedRoles(a, after.memberships);
  if (privileged.size === 0) return;
  for (const { c, index } of adds) {
    const before = reachableFrom(a.snapshot.memberships, c.member, false);
    const now = reachableFrom(after.memberships, c.member, false);
    const gained = [...now]
      .filter((r) => r !== c.member && privileged.has(r) && !before.has(r))
      .sort(compareCodePoints);
    if (gained.length === 0) continue;
    out.push(
      finding(
        'role_becomes_reachable',
        'warning',
        `adding "${c.member}" to "${c.role}" gives it a path to privileged role${gained.length > 1 ? 's' : ''} ${list(gained)}`,
        [index],
        { phase: 'membership_add', role: c.member },
      ),
    );
  }
}

function superuserNeeds(a: Analysis, out: Finding[]): void {
  if (a.executor.superuser !== false) return;
  const current = new Map(a.snapshot.roles.map((r) => [r.name, r.state]));
  const phaseOf = phaseIndexOf(a.phases);
  a.changes.forEach((change, index) => {
    const reasons: string[] = [];
    let role: string;
    switch (change.kind) {
      case 'create_role': {
        role = change.name;
        const s = change.state;
        if (s.superuser) reasons.push('creating a SUPERUSER role');
        if (s.replication || s.bypassrls)
          reasons.push(
            `creating a role with ${[s.replication ? 'REPLICATION' : '', s.bypassrls ? 'BYPASSRLS' : ''].filter(Boolean).join(' and ')}` +
              (a.pgMajor >= 16 ? ' (unless the executor has it itself)' : ''),
          );
        break;
      }
      case 'alter_role':
      case 'set_password':
      case 'set_comment':
      case 'drop_role': {
        role = change.name;
        if (current.get(change.name)?.superuser) reasons.push(`${change.kind} on superuser "${change.name}"`);
        if (change.kind === 'alter_role') {
          for (const attr of change.attributes) {
            if (attr.kind === 'superuser') reasons.push(`setting ${attr.value ? '' : 'NO'}SUPERUSER`);
            if ((attr.kind === 'replication' || attr.kind === 'bypassrls') && a.pgMajor < 16)
              reasons.push(`setting ${attr.value ? '' : 'NO'}${attr.kind.toUpperCase()}`);
          }
        }
        break;
      }
      default:
        return;
    }
    if (reasons.length === 0 && a.executorCreaterole === false) {
      reasons.push(`${change.kind} without CREATEROLE`);
    }
    if (reasons.length === 0) return;
    out.push(
      finding(
        'superuser_required',
        'error',
        `executor "${a.executor.role}" is not a superuser: ${[...new Set(reasons)].join('; ')}`,
        [index],
        { phase: a.phases[phaseOf[index]!]!.phase, role },
      ),
    );
  });
}

function ownerTransfers(a: Analysis, out: Finding[]): void {
  const owners = new Map(a.snapshot.schemas.map((s) => [s.name, s.owner]));
  a.changes.forEach((change, index) => {
    if (change.kind !== 'alter_schema_owner') return;
    const previous = owners.get(change.name) ?? null;
    out.push(
      finding(
        'ownership_transfer_changes_grantor',
        'warning',
        `schema "${change.name}" moves from ${previous === null ? 'its current owner' : `"${previous}"`} to "${change.owner}": ` +
          `privileges granted by the old owner are now recorded as granted by "${change.owner}"`,
        [index],
        { phase: 'alter', role: change.owner },
      ),
    );
  });
}

function offline(a: Analysis, out: Finding[]): void {
  const drops = a.changes.flatMap((c, i) => (c.kind === 'drop_role' ? [i] : []));
  if (a.facts === null && a.executor.superuser !== true) {
    const needs = a.changes.flatMap((c, i) => (authorityNeeds(c).length > 0 ? [i] : []));
    if (drops.length + needs.length > 0) {
      out.push(
        finding(
          'database_preflight_required',
          'warning',
          'authority and drop safety cannot be proven from the snapshot alone; review against the database',
          [...drops, ...needs],
        ),
      );
    }
  } else if (a.facts === null && drops.length > 0) {
    out.push(
      finding(
        'database_preflight_required',
        'warning',
        'what the dropped roles still own cannot be proven from the snapshot alone; review against the database',
        drops,
      ),
    );
  }
  const publicRevokes = a.changes.flatMap((c, i) =>
    c.kind === 'revoke' && c.role === 'PUBLIC' && a.executor.superuser !== true ? [i] : [],
  );
  if (publicRevokes.length > 0) {
    out.push(
      finding(
        'database_preflight_required',
        'info',
        "revokes from PUBLIC take effect only with the object owner's authority, which this review does not check",
        publicRevokes,
      ),
    );
  }
}

/** Every finding, sorted by severity (errors first), kind, first change index, role. */
export function computeFindings(a: Analysis): Finding[] {
  const out: Finding[] = [];
  missingRoles(a, out);
  executorAccess(a, out);
  disconnections(a, out);
  newPaths(a, out);
  superuserNeeds(a, out);
  ownerTransfers(a, out);
  offline(a, out);
  const severityRank = (s: Severity): number => SEVERITIES.length - SEVERITIES.indexOf(s);
  return out.sort(
    (x, y) =>
      severityRank(x.severity) - severityRank(y.severity) ||
      FINDING_KINDS.indexOf(x.kind) - FINDING_KINDS.indexOf(y.kind) ||
      (x.change_index ?? -1) - (y.change_index ?? -1) ||
      compareCodePoints(x.role ?? '', y.role ?? '') ||
      compareCodePoints(x.message, y.message),
  );
}
