// Policy content as users write it (PostgresPolicy.spec and PostgresPolicyCandidate.spec.content).
// Field names are the spec's, snake_case; optional/nullable exactly as the spec allows. No defaults resolved here.

import type { Ensure, ObjectType, Privilege, ReconciliationMode } from './vocabulary.js';

/** `grants[].object`: what a grant targets. `name` may be `*`; schema-level grants omit `name`. */
export interface GrantObject {
  readonly type: ObjectType;
  readonly name?: string | null;
  readonly schema?: string | null;
}

/** `grants[]` entry. */
export interface GrantSpec {
  readonly ensure?: Ensure;
  readonly object: GrantObject;
  readonly privileges: readonly Privilege[];
  readonly role: string;
}

/** `default_privileges[].scope`. */
export interface DefaultPrivilegeScopeSpec {
  readonly type: 'global' | 'schema';
  readonly schema?: string | null;
}

/** `default_privileges[].grant[]` item. `role` is the grantee (top-level entries only). */
export interface DefaultPrivilegeGrantSpec {
  readonly ensure?: Ensure;
  readonly on_type: ObjectType;
  readonly privileges: readonly Privilege[];
  readonly role?: string | null;
}

/** `default_privileges[]` entry. Exactly one of `schema` and `scope` must be set. */
export interface DefaultPrivilegeSpec {
  readonly owner?: string | null;
  readonly schema?: string | null;
  readonly scope?: DefaultPrivilegeScopeSpec | null;
  readonly grant: readonly DefaultPrivilegeGrantSpec[];
}

/** `memberships[].members[]` item; inherit resolves to true and admin to false when omitted. */
export interface MemberSpec {
  readonly name: string;
  readonly inherit?: boolean | null;
  readonly admin?: boolean | null;
}

/** `memberships[]` entry. */
export interface MembershipSpec {
  readonly role: string;
  readonly members: readonly MemberSpec[];
  readonly exclusive?: boolean;
}

/** `roles[].password.generate`. */
export interface PasswordGenerateSpec {
  readonly length?: number;
  readonly secretKey?: string;
  readonly secretName?: string;
}

/** `roles[].password`: `generate` and `secretRef` are mutually exclusive. */
export interface PasswordSpec {
  readonly generate?: PasswordGenerateSpec | null;
  readonly secretRef?: { readonly name: string } | null;
  readonly secretKey?: string | null;
}

/** `roles[]` entry. An omitted attribute means PostgreSQL's default, and it is enforced. */
export interface RoleSpec {
  readonly name: string;
  readonly login?: boolean | null;
  readonly superuser?: boolean | null;
  readonly createdb?: boolean | null;
  readonly createrole?: boolean | null;
  readonly inherit?: boolean | null;
  readonly replication?: boolean | null;
  readonly bypassrls?: boolean | null;
  readonly connection_limit?: number | null;
  readonly comment?: string | null;
  readonly config?: Readonly<Record<string, string>>;
  readonly external?: boolean;
  readonly password?: PasswordSpec | null;
  readonly password_valid_until?: string | null;
  readonly preserve_undeclared_grants?: boolean;
}

/** `profiles.<name>.grants[]` template. `ensure: absent` is rejected in profiles. */
export interface ProfileGrantSpec {
  readonly ensure?: Ensure;
  readonly object: { readonly type: ObjectType; readonly name?: string | null };
  readonly privileges: readonly Privilege[];
}

/** `profiles.<name>.default_privileges[]`; omitted `role` means the generated profile role. */
export interface ProfileDefaultPrivilegeSpec {
  readonly ensure?: Ensure;
  readonly on_type: ObjectType;
  readonly privileges: readonly Privilege[];
  readonly role?: string | null;
}

/** `profiles.<name>`. */
export interface ProfileSpec {
  readonly login?: boolean | null;
  readonly inherit?: boolean | null;
  readonly config?: Readonly<Record<string, string>>;
  readonly grants?: readonly ProfileGrantSpec[];
  readonly default_privileges?: readonly ProfileDefaultPrivilegeSpec[];
}

/** `schemas[]` binding: expands each listed profile into a concrete role. */
export interface SchemaBindingSpec {
  readonly name: string;
  readonly owner?: string | null;
  readonly profiles?: readonly string[];
  readonly role_pattern?: string | null;
}

/** `retirements[]` entry. */
export interface RetirementSpec {
  readonly role: string;
  readonly reassign_owned_to?: string | null;
  readonly drop_owned?: boolean;
  readonly terminate_sessions?: boolean;
}

/**
 * Policy content: the fields shared by `PostgresPolicy.spec` and `PostgresPolicyCandidate.spec.content`.
 * @example `{ roles: [{ name: 'app', login: true }], grants: [] }`
 */
export interface PolicyContent {
  readonly default_owner?: string | null;
  readonly default_privileges?: readonly DefaultPrivilegeSpec[];
  readonly grants?: readonly GrantSpec[];
  readonly memberships?: readonly MembershipSpec[];
  readonly profiles?: Readonly<Record<string, ProfileSpec>>;
  readonly reconciliation_mode?: ReconciliationMode;
  readonly retirements?: readonly RetirementSpec[];
  readonly role_pattern?: string | null;
  readonly roles?: readonly RoleSpec[];
  readonly schemas?: readonly SchemaBindingSpec[];
}

/** The content field names, in the order the content digest projects them from a policy spec. */
export const CONTENT_FIELDS = [
  'default_owner',
  'default_privileges',
  'grants',
  'memberships',
  'profiles',
  'reconciliation_mode',
  'retirements',
  'role_pattern',
  'roles',
  'schemas',
] as const satisfies readonly (keyof PolicyContent)[];
