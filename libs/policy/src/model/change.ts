// Typed plan changes: exactly the change kinds of the spec's review-artifact table.
// The diff emits them, the renderer turns them into SQL, the digest hashes them; SQL is never parsed back.

import type { DefaultPrivilegeScope } from './state.js';
import type { Grantee, ObjectType, Privilege } from './vocabulary.js';

/** Initial state of a created role (the artifact's create_role.state; comment and config values redacted there). */
export interface CreateRoleState {
  readonly login: boolean;
  readonly superuser: boolean;
  readonly createdb: boolean;
  readonly createrole: boolean;
  readonly inherit: boolean;
  readonly replication: boolean;
  readonly bypassrls: boolean;
  readonly connection_limit: number;
  readonly comment: string | null;
  readonly password_valid_until: string | null;
}

/** One `alter_role` attribute entry. */
export type RoleAttribute =
  | {
      readonly kind:
        'login' | 'superuser' | 'createdb' | 'createrole' | 'inherit' | 'replication' | 'bypassrls';
      readonly value: boolean;
    }
  | { readonly kind: 'connection_limit'; readonly value: number }
  | { readonly kind: 'valid_until'; readonly value: string | null }
  | { readonly kind: 'set_config'; readonly parameter: string; readonly value: string }
  | { readonly kind: 'reset_config'; readonly parameter: string };

/** A plan change. `kind` values and field names are the spec's. */
export type Change =
  | { readonly kind: 'create_role'; readonly name: string; readonly state: CreateRoleState }
  | { readonly kind: 'create_schema'; readonly name: string; readonly owner: string | null }
  | { readonly kind: 'alter_schema_owner'; readonly name: string; readonly owner: string }
  | {
      readonly kind: 'ensure_schema_owner_privileges';
      readonly name: string;
      readonly owner: string;
      readonly privileges: readonly Privilege[];
    }
  | { readonly kind: 'alter_role'; readonly name: string; readonly attributes: readonly RoleAttribute[] }
  | { readonly kind: 'set_comment'; readonly name: string; readonly comment: string | null }
  | {
      readonly kind: 'grant';
      readonly role: Grantee;
      readonly privileges: readonly Privilege[];
      readonly object_type: ObjectType;
      readonly name: string | null;
      readonly schema: string | null;
    }
  | {
      readonly kind: 'revoke';
      readonly role: Grantee;
      readonly privileges: readonly Privilege[];
      readonly object_type: ObjectType;
      readonly name: string | null;
      readonly schema: string | null;
      readonly grantor: string | null;
    }
  | {
      readonly kind: 'set_default_privilege' | 'revoke_default_privilege';
      readonly owner: string;
      readonly scope: DefaultPrivilegeScope;
      readonly on_type: ObjectType;
      readonly grantee: Grantee;
      readonly privileges: readonly Privilege[];
    }
  | {
      readonly kind: 'add_member';
      readonly role: string;
      readonly member: string;
      readonly inherit: boolean;
      readonly admin: boolean;
    }
  | {
      readonly kind: 'remove_member';
      readonly role: string;
      readonly member: string;
      readonly grantor: string | null;
    }
  | { readonly kind: 'reassign_owned'; readonly from_role: string; readonly to_role: string }
  | { readonly kind: 'drop_owned'; readonly role: string }
  | { readonly kind: 'terminate_sessions'; readonly role: string }
  /** `password_source` is the source version (`secretName:secretKey:resourceVersion`), never a verifier. */
  | { readonly kind: 'set_password'; readonly name: string; readonly password_source: string }
  | { readonly kind: 'drop_role'; readonly name: string };

/** The `kind` of a change. */
export type ChangeKind = Change['kind'];

/** Narrows a change by kind. */
export type ChangeOf<K extends ChangeKind> = Extract<Change, { readonly kind: K }>;

/** The spec's change_summary counters (same fields in plan and policy status). */
export interface ChangeSummary {
  readonly default_privileges_revoked: number;
  readonly default_privileges_set: number;
  readonly grants_added: number;
  readonly grants_revoked: number;
  readonly members_added: number;
  readonly members_removed: number;
  readonly passwords_set: number;
  readonly roles_altered: number;
  readonly roles_created: number;
  readonly roles_dropped: number;
  readonly schema_owners_altered: number;
  readonly schemas_created: number;
  readonly sessions_terminated: number;
  readonly total: number;
}
