// preflight[]: executor_authority, role_drop_safety and server_compatibility, each with its issues and
// the coverage it really achieved (what ran, on which change indices, what stayed unchecked).

import { compareCodePoints, PUBLIC_GRANTEE } from '@rolepolicy/policy';

import type {
  CoverageCheck,
  Finding,
  Preflight,
  PreflightCheck,
  PreflightIssue,
  PreflightStatus,
} from './artifact.schema.js';
import { reachableFrom } from './access-simulation.js';
import {
  authorityNeeds,
  existingBefore,
  isPredefined,
  phaseIndexOf,
  type Analysis,
} from './review-context.js';
import type { DropRoleFacts } from './review-facts.js';

function sortedIndices(values: Iterable<number>): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function preflight(
  check: PreflightCheck,
  status: PreflightStatus,
  issues: readonly PreflightIssue[],
  checks: readonly CoverageCheck[],
  checked: Iterable<number>,
  unchecked: Iterable<number>,
  actorRole: string | null,
): Preflight {
  const uncheckedList = sortedIndices(unchecked);
  const sortedIssues = [...issues].sort(
    (a, b) =>
      compareCodePoints(a.role ?? '', b.role ?? '') ||
      compareCodePoints(a.code, b.code) ||
      compareCodePoints(a.message, b.message),
  );
  return {
    check,
    status: status === 'passed' && issues.length > 0 ? 'failed' : status,
    issue_count: issues.length,
    coverage: {
      kind: uncheckedList.length > 0 ? 'targeted' : 'complete',
      checks_performed: [...checks],
      checked_change_indices: sortedIndices(checked),
      unchecked_change_indices: uncheckedList,
    },
    actor_role: actorRole,
    issues: sortedIssues,
  };
}

/** executor_authority: default-privilege owners, predefined memberships, grantors and plan order. */
function executorAuthority(a: Analysis, findings: readonly Finding[]): Preflight {
  const actor = a.executor.role;
  const relevant = a.changes.flatMap((c, i) =>
    authorityNeeds(c).length > 0 ||
    ((c.kind === 'add_member' || c.kind === 'remove_member') && isPredefined(c.role)) ||
    (c.kind === 'revoke' && c.role === PUBLIC_GRANTEE)
      ? [i]
      : [],
  );
  const superuserIssues = findings
    .filter((f) => f.kind === 'superuser_required')
    .map((f) => ({ code: 'superuser_required', message: f.message, role: f.role ?? null }));
  const superuserIndices = findings
    .filter((f) => f.kind === 'superuser_required')
    .flatMap((f) => f.change_indices);
  if (a.executor.superuser === true) {
    return preflight(
      'executor_authority',
      'passed',
      [],
      [
        'default_privilege_owner',
        'predefined_role_membership',
        'grantor_reachability',
        'plan_order_authority',
        'revoke_acl_ownership',
      ],
      relevant,
      [],
      actor,
    );
  }
  const publicRevokes = a.changes.flatMap((c, i) =>
    c.kind === 'revoke' && c.role === PUBLIC_GRANTEE ? [i] : [],
  );
  if (!a.timeline.complete) {
    // Without the executor's graph only the superuser checks (role attributes) are provable.
    return preflight(
      'executor_authority',
      superuserIssues.length > 0 ? 'failed' : 'unknown',
      superuserIssues,
      [],
      superuserIndices,
      relevant,
      actor,
    );
  }
  const issues: PreflightIssue[] = [...superuserIssues];
  const checked = new Set<number>(superuserIndices);
  const phaseOf = phaseIndexOf(a.phases);
  const existing = existingBefore(a.snapshot);
  const created = new Set(a.changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : [])));
  a.changes.forEach((change, index) => {
    const p = phaseOf[index]!;
    const state = p === 0 ? a.timeline.before : a.timeline.afterPhase[p - 1]!;
    const found = changeAuthority(a, change, index, state, { existing, created });
    if (found.checked) checked.add(index);
    issues.push(...found.issues);
  });
  for (const f of findings.filter((x) => x.kind === 'executor_loses_access')) {
    issues.push({ code: 'executor_loses_access', message: f.message, role: f.role ?? null });
  }
  return preflight(
    'executor_authority',
    'passed',
    issues,
    ['default_privilege_owner', 'predefined_role_membership', 'grantor_reachability', 'plan_order_authority'],
    checked,
    publicRevokes,
    actor,
  );
}

/** What the executor's authority must cover for one change, given the role graph at its phase. */
function changeAuthority(
  a: Analysis,
  change: Analysis['changes'][number],
  index: number,
  state: Analysis['timeline']['before'],
  roles: { readonly existing: ReadonlySet<string>; readonly created: ReadonlySet<string> },
): { readonly checked: boolean; readonly issues: readonly PreflightIssue[] } {
  const actor = a.executor.role;
  const { existing, created } = roles;
  const issues: PreflightIssue[] = [];
  let checked = false;
  for (const need of authorityNeeds(change)) {
    checked = true;
    if (need.check === 'plan_order_authority') continue; // reported from executor_loses_access below
    const status = state[need.access === 'usage' ? 'usage' : 'reachability'].get(need.role);
    if (need.check === 'default_privilege_owner' && !existing.has(need.role) && !created.has(need.role)) {
      issues.push({
        code: 'missing_default_privilege_owner',
        message: `change ${index}: default-privilege owner "${need.role}" does not exist`,
        role: need.role,
      });
    } else if (status !== 'reachable') {
      issues.push(
        need.check === 'default_privilege_owner'
          ? {
              code: 'default_privilege_owner_unusable',
              message:
                `change ${index}: executor "${actor}" does not have the privileges of "${need.role}" ` +
                `(ALTER DEFAULT PRIVILEGES FOR ROLE needs them; ADMIN is not enough)` +
                (created.has(need.role)
                  ? '; a role created by a non-superuser gives its creator no USAGE'
                  : ''),
              role: need.role,
            }
          : {
              code: 'grantor_unreachable',
              message: `change ${index}: executor "${actor}" cannot act as grantor "${need.role}" to revoke its grant`,
              role: need.role,
            },
      );
    }
  }
  if ((change.kind === 'add_member' || change.kind === 'remove_member') && isPredefined(change.role)) {
    checked = true;
    const ok =
      a.pgMajor >= 16 ? hasAdmin(a, state.snapshot.memberships, change.role) : a.executorCreaterole === true;
    if (!ok) {
      issues.push({
        code: 'predefined_role_admin_required',
        message:
          a.pgMajor >= 16
            ? `change ${index}: granting or revoking "${change.role}" needs ADMIN OPTION on it, which executor "${actor}" lacks`
            : `change ${index}: granting or revoking "${change.role}" needs CREATEROLE or superuser`,
        role: change.role,
      });
    }
  }
  return { checked, issues };
}

function hasAdmin(a: Analysis, memberships: Analysis['snapshot']['memberships'], role: string): boolean {
  const reach = reachableFrom(memberships, a.executor.role, false);
  return memberships.some((e) => e.role === role && e.admin && reach.has(e.member));
}

/** role_drop_safety: what still owns, holds, connects or belongs, after the plan's retirement steps. */
function dropSafety(a: Analysis): Preflight {
  const drops = a.changes.flatMap((c, i) => (c.kind === 'drop_role' ? [{ role: c.name, index: i }] : []));
  const actor = a.executor.role;
  if (a.facts === null) {
    return preflight(
      'role_drop_safety',
      drops.length > 0 ? 'not_run' : 'passed',
      [],
      [],
      [],
      drops.map((d) => d.index),
      actor,
    );
  }
  const facts = new Map(a.facts.drop_roles.map((f) => [f.role, f]));
  const issues: PreflightIssue[] = [];
  const unchecked: number[] = [];
  for (const { role, index } of drops) {
    const f = facts.get(role);
    if (f === undefined) {
      unchecked.push(index);
      continue;
    }
    issues.push(...dropIssues(a, f));
  }
  const checked = drops.map((d) => d.index).filter((i) => !unchecked.includes(i));
  // A drop nobody looked at is not a pass.
  const status = unchecked.length > 0 && issues.length === 0 ? 'unknown' : 'passed';
  return preflight('role_drop_safety', status, issues, ['drop_role_safety'], checked, unchecked, actor);
}

function dropIssues(a: Analysis, f: DropRoleFacts): PreflightIssue[] {
  const steps = new Set(
    a.changes.flatMap((c) =>
      (c.kind === 'drop_owned' || c.kind === 'terminate_sessions') && c.role === f.role
        ? [c.kind]
        : c.kind === 'reassign_owned' && c.from_role === f.role
          ? ['reassign_owned']
          : [],
    ),
  );
  const removed = new Set(
    a.changes.flatMap((c) => (c.kind === 'remove_member' ? [`${c.role}\u0000${c.member}`] : [])),
  );
  const examples = f.examples.length > 0 ? ` (e.g. ${f.examples.join('; ')})` : '';
  const issue = (code: string, message: string): PreflightIssue => ({ code, message, role: f.role });
  const out: PreflightIssue[] = [];
  if (f.owned_other > 0)
    out.push(
      issue(
        'owns_objects_in_other_databases',
        `role "${f.role}" owns ${f.owned_other} object(s) in other databases, which DROP OWNED and REASSIGN OWNED here cannot reach`,
      ),
    );
  if (f.acl_other > 0)
    out.push(
      issue(
        'holds_privileges_in_other_databases',
        `role "${f.role}" holds privileges in ${f.acl_other} other-database object(s)`,
      ),
    );
  if (f.owned_current > 0 && !steps.has('drop_owned') && !steps.has('reassign_owned'))
    out.push(
      issue(
        'owns_objects',
        `role "${f.role}" owns ${f.owned_current} object(s)${examples}; set reassign_owned_to or drop_owned`,
      ),
    );
  if (f.owned_shared > 0 && !steps.has('reassign_owned'))
    out.push(
      issue(
        'owns_shared_objects',
        `role "${f.role}" owns ${f.owned_shared} shared object(s) (databases, tablespaces); set reassign_owned_to`,
      ),
    );
  if (f.acl_current > 0 && !steps.has('drop_owned'))
    out.push(
      issue(
        'holds_privileges',
        `role "${f.role}" holds privileges on ${f.acl_current} object(s)${f.owned_current === 0 ? examples : ''}; set drop_owned`,
      ),
    );
  if (f.sessions > 0 && !steps.has('terminate_sessions'))
    out.push(
      issue(
        'active_sessions',
        `role "${f.role}" has ${f.sessions} active session(s); set terminate_sessions`,
      ),
    );
  const memberOf = f.member_of.filter((r) => !removed.has(`${r}\u0000${f.role}`));
  if (memberOf.length > 0)
    out.push(
      issue(
        'still_member',
        `role "${f.role}" is still a member of ${memberOf.map((r) => `"${r}"`).join(', ')}; DROP ROLE removes these memberships silently`,
      ),
    );
  const members = f.members.filter((m) => !removed.has(`${f.role}\u0000${m}`));
  if (members.length > 0)
    out.push(
      issue(
        'has_members',
        `role "${f.role}" still has member(s) ${members.map((m) => `"${m}"`).join(', ')}, who lose what it grants`,
      ),
    );
  return out;
}

/** server_compatibility: per-edge inherit before PostgreSQL 16, predefined roles the server lacks. */
function serverCompatibility(a: Analysis): Preflight {
  const issues: PreflightIssue[] = [];
  const checked: number[] = [];
  const desiredInherit = new Map(a.desired.roles.map((r) => [r.name, r.state.inherit]));
  const liveInherit = new Map(a.snapshot.roles.map((r) => [r.name, r.state.inherit]));
  const predefined = new Set([
    ...(a.facts?.predefined_roles ?? []),
    ...[...existingBefore(a.snapshot)].filter(isPredefined),
  ]);
  const reported = new Set<string>();
  a.changes.forEach((change, index) => {
    if (change.kind !== 'add_member' && change.kind !== 'remove_member' && change.kind !== 'grant') return;
    checked.push(index);
    if (change.kind === 'add_member' && !change.inherit && a.pgMajor < 16) {
      const inherit = desiredInherit.get(change.member) ?? liveInherit.get(change.member) ?? true;
      if (inherit) {
        issues.push({
          code: 'per_edge_inherit_unsupported',
          message:
            `change ${index}: PostgreSQL ${a.pgMajor} has no per-membership INHERIT; "${change.member}" inherits ` +
            `through every membership (rolinherit), so inherit: false on "${change.role}" cannot hold and re-plans every cycle`,
          role: change.member,
        });
      }
    }
    for (const role of change.kind === 'grant' ? [change.role] : [change.role, change.member]) {
      if (!isPredefined(role) || predefined.has(role) || reported.has(role)) continue;
      reported.add(role);
      issues.push({
        code: 'missing_predefined_role',
        message: `change ${index}: predefined role "${role}" does not exist on PostgreSQL ${a.pgMajor}`,
        role,
      });
    }
  });
  return preflight(
    'server_compatibility',
    'passed',
    issues,
    ['predefined_role_membership'],
    checked,
    [],
    null,
  );
}

/** The three preflight checks, in the spec's order. */
export function computePreflight(a: Analysis, findings: readonly Finding[]): Preflight[] {
  return [executorAuthority(a, findings), dropSafety(a), serverCompatibility(a)];
}
