// Small builders for DesiredState and CatalogSnapshot in the diff/plan/interpreter tests.
// Defaults are PostgreSQL's (NOLOGIN, INHERIT, no limit) and an empty, superuser-executed PG15 database.

import type { DesiredRole, DesiredState } from '../../model/desired.js';
import type { CatalogSnapshot } from '../../model/snapshot.js';
import type { RoleEntry, RoleState } from '../../model/state.js';
import type { PlanInput } from '../../plan/compute-plan.js';

/** A role state with PostgreSQL defaults, overridden field by field. */
export function roleState(overrides: Partial<RoleState> = {}): RoleState {
  return {
    login: false,
    superuser: false,
    createdb: false,
    createrole: false,
    inherit: true,
    replication: false,
    bypassrls: false,
    connection_limit: -1,
    comment: null,
    password_valid_until: null,
    config: {},
    ...overrides,
  };
}

/** A declared managed role. */
export function desiredRole(
  name: string,
  state: Partial<RoleState> = {},
  extra: Partial<Omit<DesiredRole, 'name' | 'state'>> = {},
): DesiredRole {
  return {
    name,
    state: roleState(state),
    external: false,
    preserve_undeclared_grants: false,
    password: null,
    generated_from: null,
    ...extra,
  };
}

/** A declared `external: true` role. */
export function externalRole(name: string): DesiredRole {
  return desiredRole(name, {}, { external: true });
}

/** A live role entry. */
export function liveRole(name: string, state: Partial<RoleState> = {}): RoleEntry {
  return { name, state: roleState(state) };
}

/** An empty desired state in authoritative mode, overridden field by field. */
export function desiredState(overrides: Partial<DesiredState> = {}): DesiredState {
  return {
    reconciliation_mode: 'authoritative',
    roles: [],
    schemas: [],
    grants: [],
    grant_absences: [],
    default_privileges: [],
    default_privilege_absences: [],
    memberships: [],
    exclusive_membership_roles: [],
    retirements: [],
    warnings: [],
    ...overrides,
  };
}

/** An empty PG15 snapshot read by a superuser executor, overridden field by field. */
export function catalogSnapshot(overrides: Partial<CatalogSnapshot> = {}): CatalogSnapshot {
  const roles = overrides.roles ?? [];
  return {
    server_version_num: 150010,
    current_database: 'app',
    executor: { role: 'rolepolicy_executor', superuser: true, createrole: true, member_of: [] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles,
    schemas: [],
    grants: [],
    default_privileges: [],
    memberships: [],
    inventory: [],
    unsatisfiable_wildcards: [],
    existing_roles: roles.map((r) => r.name),
    function_signatures: [],
    ...overrides,
  };
}

/** A plan input in the desired state's mode with no passwords and transfers disallowed. */
export function planInput(
  desired: DesiredState,
  snapshot: CatalogSnapshot,
  overrides: Partial<Omit<PlanInput, 'desired' | 'snapshot'>> = {},
): PlanInput {
  return {
    desired,
    snapshot,
    mode: desired.reconciliation_mode,
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
    ...overrides,
  };
}
