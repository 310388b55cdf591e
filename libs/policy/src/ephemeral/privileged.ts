// Privileged roles in an ephemeral bundle (ADR 0021): which bundle roles carry SUPERUSER, CREATEROLE,
// BYPASSRLS or REPLICATION, are predefined `pg_*` roles, or reach one of those through memberships. Pure.
import { compareCodePoints } from '../canonical-order.js';
import { isPredefinedRole } from '../diff/keys.js';

/** What makes a role privileged: one of the four attributes, or being a predefined `pg_*` role. */
export type Elevation = 'SUPERUSER' | 'CREATEROLE' | 'BYPASSRLS' | 'REPLICATION' | 'predefined';

/** One role of a membership graph (live catalog or declared policy) and the roles it is a member of. */
export interface RoleFacts {
  readonly name: string;
  readonly superuser: boolean;
  readonly createrole: boolean;
  readonly bypassrls: boolean;
  readonly replication: boolean;
  /** Roles this role is a direct member of (any inherit or set option). */
  readonly memberOf: readonly string[];
}

/** A bundle role that is privileged, or reaches a privileged role through memberships. */
export interface PrivilegedFinding {
  /** The bundle role (granted to the subject). */
  readonly role: string;
  /** The privileged role: `role` itself, or a role it is (transitively) a member of. */
  readonly privileged: string;
  /** From `role` to `privileged`, both included (shortest path). */
  readonly path: readonly string[];
  readonly privileges: readonly Elevation[];
}

function privilegesOf(name: string, facts: RoleFacts | undefined): Elevation[] {
  const found: Elevation[] = [];
  if (facts?.superuser === true) found.push('SUPERUSER');
  if (facts?.createrole === true) found.push('CREATEROLE');
  if (facts?.bypassrls === true) found.push('BYPASSRLS');
  if (facts?.replication === true) found.push('REPLICATION');
  if (isPredefinedRole(name)) found.push('predefined');
  return found;
}

/**
 * Every privileged role each bundle role is or reaches, following memberships whatever their inherit or
 * set option: attributes are never inherited, but a member may `SET ROLE` to a role it belongs to
 * (always before PostgreSQL 16, with the SET option since), and `pg_*` privileges pass by inheritance.
 * A role missing from `graph` is judged by its name only. Sorted by bundle role, then privileged role.
 *
 * @example privilegedRoles(['ops'], [{ name: 'ops', memberOf: ['pg_read_server_files'], ... }])
 *   // [{ role: 'ops', privileged: 'pg_read_server_files', path: ['ops', 'pg_read_server_files'], privileges: ['predefined'] }]
 */
export function privilegedRoles(
  bundleRoles: readonly string[],
  graph: readonly RoleFacts[],
): PrivilegedFinding[] {
  const byName = new Map(graph.map((r) => [r.name, r]));
  const findings: PrivilegedFinding[] = [];
  for (const role of [...new Set(bundleRoles)].sort(compareCodePoints)) {
    // Breadth first, so each privileged role is reported with a shortest path; `seen` stops cycles.
    const paths = new Map<string, readonly string[]>([[role, [role]]]);
    const queue = [role];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const path = paths.get(next)!;
      const privileges = privilegesOf(next, byName.get(next));
      if (privileges.length > 0) findings.push({ role, privileged: next, path, privileges });
      for (const parent of [...(byName.get(next)?.memberOf ?? [])].sort(compareCodePoints)) {
        if (paths.has(parent)) continue;
        paths.set(parent, [...path, parent]);
        queue.push(parent);
      }
    }
  }
  return findings.sort(
    (a, b) => compareCodePoints(a.role, b.role) || compareCodePoints(a.privileged, b.privileged),
  );
}

/** One finding in words: `role ops has SUPERUSER`, `role ops is a member of pg_monitor (...) through ...`. */
export function describePrivileged(finding: PrivilegedFinding): string {
  const what = finding.privileges
    .map((p) => (p === 'predefined' ? 'is a predefined role' : `has ${p}`))
    .join(' and ');
  if (finding.path.length === 1) return `role ${finding.role} ${what}`;
  const through = finding.path.length > 2 ? ` (through ${finding.path.join(' -> ')})` : '';
  return `role ${finding.role} is a member of ${finding.privileged}, which ${what}${through}`;
}

/** Namespaces whose access policies may opt in to privileged roles (EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES). */
export interface PrivilegedNamespaces {
  /** `*`: every namespace. */
  readonly all: boolean;
  readonly names: readonly string[];
}

/** The operator's default: no namespace may grant privileged roles, whatever its access policies say. */
export const NO_PRIVILEGED_NAMESPACES: PrivilegedNamespaces = { all: false, names: [] };

/** Environment variable holding the operator's allow-list (executor and access-scheduler). */
export const PRIVILEGED_NAMESPACES_ENV = 'EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES';

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Parses the allow-list: empty (none), `*` (all), or comma-separated namespace names.
 *
 * @example parsePrivilegedNamespaces('platform, dba') // { ok: true, value: { all: false, names: ['dba', 'platform'] } }
 */
export function parsePrivilegedNamespaces(
  raw: string,
):
  | { readonly ok: true; readonly value: PrivilegedNamespaces }
  | { readonly ok: false; readonly error: string } {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 1 && items[0] === '*') return { ok: true, value: { all: true, names: [] } };
  const bad = items.find((s) => !NAMESPACE.test(s));
  if (bad !== undefined) {
    return {
      ok: false,
      error: 'must be empty, * or a comma-separated list of namespace names (lowercase DNS labels)',
    };
  }
  return { ok: true, value: { all: false, names: [...new Set(items)].sort(compareCodePoints) } };
}

/** Whether a bundle in `namespace` may hold privileged roles, or the rule that refuses it (ADR 0021). */
export function privilegedAllowed(
  namespace: string,
  policyAllows: boolean,
  operator: PrivilegedNamespaces,
): { readonly ok: true } | { readonly ok: false; readonly rule: string } {
  if (!policyAllows) {
    return {
      ok: false,
      rule: 'the EphemeralAccessPolicy does not allow privileged roles (spec.allowPrivilegedRoles is not true)',
    };
  }
  if (!operator.all && !operator.names.includes(namespace)) {
    return {
      ok: false,
      rule:
        `the operator does not allow privileged roles in namespace ${namespace} ` +
        `(${PRIVILEGED_NAMESPACES_ENV})`,
    };
  }
  return { ok: true };
}

/**
 * Null when the bundle may be granted: no privileged finding, or the policy and the operator both allow
 * them. Otherwise the refusal message naming each privileged role and the rule that refuses it.
 */
export function privilegedRefusal(
  findings: readonly PrivilegedFinding[],
  namespace: string,
  policyAllows: boolean,
  operator: PrivilegedNamespaces,
): string | null {
  if (findings.length === 0) return null;
  const allowed = privilegedAllowed(namespace, policyAllows, operator);
  if (allowed.ok) return null;
  return `${findings.map(describePrivileged).join('; ')}: ${allowed.rule}`;
}

/**
 * The environment variable {@link PRIVILEGED_NAMESPACES_ENV} as a service config entry (the shape of the
 * runtime's `EnvVar`): the executor enforces it, the access-scheduler reads it to report early.
 */
export function privilegedNamespacesEnvVar(): {
  readonly doc: string;
  readonly default: string;
  readonly parse: (
    raw: string,
  ) =>
    | { readonly ok: true; readonly value: PrivilegedNamespaces }
    | { readonly ok: false; readonly error: string };
} {
  return {
    doc:
      'Namespaces whose EphemeralAccessPolicies may grant privileged roles (SUPERUSER, CREATEROLE, BYPASSRLS, ' +
      'REPLICATION, predefined pg_* roles or members of them) when they set spec.allowPrivilegedRoles: ' +
      'comma-separated names, * for all, empty for none (ADR 0021)',
    default: '',
    parse: (raw) => {
      const parsed = parsePrivilegedNamespaces(raw);
      return parsed.ok ? { ok: true, value: parsed.value } : { ok: false, error: parsed.error };
    },
  };
}
