// The desired graph: policy content after validation and profile expansion, in the same shapes as the
// live snapshot, plus the assertion sets that only the desired side has.

import type { DefaultPrivilegeEntry, GrantEntry, MembershipEdge, RoleState, SchemaEntry } from './state.js';
import type { ReconciliationMode } from './vocabulary.js';

/** Where a role's password comes from. The source version, never the password, is bound into digests. */
export type PasswordSource =
  | { readonly kind: 'secret_ref'; readonly secretName: string; readonly secretKey: string }
  | {
      readonly kind: 'generate';
      readonly secretName: string;
      readonly secretKey: string;
      readonly length: number;
    };

/** A role the policy declares (one-off or generated from a profile). */
export interface DesiredRole {
  readonly name: string;
  readonly state: RoleState;
  /** Referenced but never created, altered, dropped or password-managed. */
  readonly external: boolean;
  readonly preserve_undeclared_grants: boolean;
  readonly password: PasswordSource | null;
  /** Set for profile-generated roles. */
  readonly generated_from: { readonly profile: string; readonly schema: string } | null;
}

/** A role to retire and finally drop. */
export interface Retirement {
  readonly role: string;
  readonly reassign_owned_to: string | null;
  readonly drop_owned: boolean;
  readonly terminate_sessions: boolean;
}

/** The expanded, validated desired state of one policy. All lists sorted canonically. */
export interface DesiredState {
  readonly reconciliation_mode: ReconciliationMode;
  readonly roles: readonly DesiredRole[];
  /** Schemas with desired owner (or null) and desired owner privileges ({CREATE, USAGE} when owned). */
  readonly schemas: readonly SchemaEntry[];
  readonly grants: readonly GrantEntry[];
  /** `ensure: absent` grant assertions. */
  readonly grant_absences: readonly GrantEntry[];
  readonly default_privileges: readonly DefaultPrivilegeEntry[];
  readonly default_privilege_absences: readonly DefaultPrivilegeEntry[];
  readonly memberships: readonly MembershipEdge[];
  /** Granted roles whose membership stanza says `exclusive: true` (only `pg_*` or external roles). */
  readonly exclusive_membership_roles: readonly string[];
  readonly retirements: readonly Retirement[];
  /** Advisory warnings found while expanding (e.g. undeclared default_owner). */
  readonly warnings: readonly string[];
}
