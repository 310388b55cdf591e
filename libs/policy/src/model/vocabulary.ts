// The spec's closed vocabularies (privileges, object types, modes) and their canonical orders.
// Every sorted container and rendered list in the engine follows these orders, so SQL and digests are stable.

/** A PostgreSQL privilege, as the spec spells it. Listed in canonical (SQL spelling) order. */
export const PRIVILEGES = [
  'CONNECT',
  'CREATE',
  'DELETE',
  'EXECUTE',
  'INSERT',
  'REFERENCES',
  'SELECT',
  'TEMPORARY',
  'TRIGGER',
  'TRUNCATE',
  'UPDATE',
  'USAGE',
] as const;
export type Privilege = (typeof PRIVILEGES)[number];

/** Object kinds a grant can target. Listed in canonical (snake name) order. */
export const OBJECT_TYPES = [
  'database',
  'function',
  'materialized_view',
  'schema',
  'sequence',
  'table',
  'type',
  'view',
] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/** Whether an entry asserts presence or absence. */
export const ENSURES = ['present', 'absent'] as const;
export type Ensure = (typeof ENSURES)[number];

/** How much of the live state the policy claims (content-level `reconciliation_mode`). */
export const RECONCILIATION_MODES = ['authoritative', 'additive', 'adopt'] as const;
export type ReconciliationMode = (typeof RECONCILIATION_MODES)[number];

/** The exact grantee string that means the PUBLIC pseudo-role. `public` and `"PUBLIC"` are ordinary roles. */
export const PUBLIC_GRANTEE = 'PUBLIC';

/** A grantee: a role name, or exactly `PUBLIC` for the pseudo-role. */
export type Grantee = string;

/** Spec phase values, in plan order. */
export const PHASES = [
  'create',
  'alter',
  'grant',
  'membership_remove',
  'membership_add',
  'revoke',
  'default_privilege_revoke',
  'retire',
] as const;
export type Phase = (typeof PHASES)[number];

/** Compares privileges by canonical order. */
export function comparePrivileges(a: Privilege, b: Privilege): number {
  return PRIVILEGES.indexOf(a) - PRIVILEGES.indexOf(b);
}

/** Compares object types by canonical order. */
export function compareObjectTypes(a: ObjectType, b: ObjectType): number {
  return OBJECT_TYPES.indexOf(a) - OBJECT_TYPES.indexOf(b);
}
