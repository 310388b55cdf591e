// What findings and preflight checks share: the plan, the snapshot, the identities, the catalog facts
// and the simulated access timeline, plus which roles exist, are created, or could not be verified.

import {
  PUBLIC_GRANTEE,
  type CatalogSnapshot,
  type Change,
  type DesiredState,
  type ManagedScope,
  type PlanPhase,
} from '@rolepolicy/policy';

import type { Identity } from './artifact.schema.js';
import type { AccessTimeline } from './access-simulation.js';
import type { ReviewFacts } from './review-facts.js';

/** Shared inputs of the analyses. */
export interface Analysis {
  readonly changes: readonly Change[];
  readonly phases: readonly PlanPhase[];
  readonly desired: DesiredState;
  readonly scope: ManagedScope;
  readonly snapshot: CatalogSnapshot;
  readonly facts: ReviewFacts | null;
  readonly executor: Identity;
  /** The executor's CREATEROLE flag when known (the intended executor is the inspecting role). */
  readonly executorCreaterole: boolean | null;
  readonly timeline: AccessTimeline;
  readonly pgMajor: number;
}

/** Index of the phase (into `phases`) each change belongs to. */
export function phaseIndexOf(phases: readonly PlanPhase[]): readonly number[] {
  const out: number[] = [];
  phases.forEach((phase, p) => {
    for (const i of phase.change_indices) out[i] = p;
  });
  return out;
}

/** Roles inspection confirmed to exist (managed or not), before the plan. */
export function existingBefore(snapshot: CatalogSnapshot): ReadonlySet<string> {
  return new Set([...snapshot.existing_roles, ...snapshot.roles.map((r) => r.name)]);
}

/** Roles whose existence inspection asked about (so absence from the snapshot means "missing"). */
export function verifiedNames(scope: ManagedScope): ReadonlySet<string> {
  return new Set([
    ...scope.roles,
    ...scope.membership_grantors,
    ...scope.default_privilege_scopes.map((k) => k.owner),
    ...scope.wildcards.map((w) => w.grantee).filter((g) => g !== PUBLIC_GRANTEE),
  ]);
}

/** Roles the plan creates. */
export function createdRoles(changes: readonly Change[]): ReadonlySet<string> {
  return new Set(changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : [])));
}

/** Whether a role name is a predefined role. */
export function isPredefined(role: string): boolean {
  return role.startsWith('pg_');
}

/** What a change needs from the executor on a role: membership (SET ROLE) or its privileges (USAGE). */
export interface AuthorityNeed {
  readonly role: string;
  readonly access: 'reachability' | 'usage';
  readonly check: 'default_privilege_owner' | 'grantor_reachability' | 'plan_order_authority';
}

/** The roles a change needs the executor to act as (engine notes 6.2); none for a superuser. */
export function authorityNeeds(change: Change): readonly AuthorityNeed[] {
  switch (change.kind) {
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      // ALTER DEFAULT PRIVILEGES FOR ROLE o needs the privileges of o; ADMIN is not enough.
      return [{ role: change.owner, access: 'usage', check: 'default_privilege_owner' }];
    case 'reassign_owned':
      return [
        { role: change.from_role, access: 'usage', check: 'plan_order_authority' },
        { role: change.to_role, access: 'usage', check: 'plan_order_authority' },
      ];
    case 'drop_owned':
      return [{ role: change.role, access: 'usage', check: 'plan_order_authority' }];
    case 'alter_schema_owner':
      return [{ role: change.owner, access: 'reachability', check: 'plan_order_authority' }];
    case 'create_schema':
      return change.owner === null
        ? []
        : [{ role: change.owner, access: 'reachability', check: 'plan_order_authority' }];
    case 'revoke':
    case 'remove_member':
      return change.grantor === null
        ? []
        : [{ role: change.grantor, access: 'reachability', check: 'grantor_reachability' }];
    default:
      return [];
  }
}
