// What `rolepolicy generate` reads from a live database, as the pure generator consumes it: the catalog
// snapshot of the discovered scope (every selected role, every schema, every object) and the facts a
// policy cannot state. Read by libs/catalog in one transaction; JSON-safe.

import type { CatalogSnapshot } from '../model/snapshot.js';
import type { ObjectType } from '../model/vocabulary.js';

/** What kind of access a PostgresPolicy cannot express. */
export type InexpressibleKind =
  | 'column_privilege'
  | 'grant_option'
  | 'maintain'
  | 'language'
  | 'foreign_data_wrapper'
  | 'foreign_server'
  | 'large_object'
  | 'tablespace'
  | 'membership_outside_selection'
  | 'row_security_policy'
  | 'membership_set_option'
  | 'database_role_setting';

/** One piece of access a selected role holds that the policy cannot state. */
export interface InexpressibleAccess {
  readonly kind: InexpressibleKind | string;
  readonly grantee: string;
  /** Human-readable target, e.g. `app.orders.email` or `role admins`. */
  readonly target: string;
  readonly privilege: string;
}

/** Roles left out of the selection whatever the globs say. */
export interface LeftOutRoles {
  /** Predefined `pg_*` roles matched by a glob. */
  readonly predefined: readonly string[];
  /** The bootstrap superuser (OID 10), when a glob matched it. */
  readonly bootstrap: readonly string[];
}

/** Everything generation reads, from one REPEATABLE READ transaction. */
export interface GenerateSource {
  /**
   * The snapshot of the selected roles over every schema, with PUBLIC rows of every object; `inventory`
   * lists every object of every schema.
   */
  readonly snapshot: CatalogSnapshot;
  /** The selected roles, sorted. */
  readonly selected_roles: readonly string[];
  readonly left_out: LeftOutRoles;
  /** Selected roles with a password set; null when the reader may not see pg_authid. */
  readonly password_roles: readonly string[] | null;
  readonly inexpressible: readonly InexpressibleAccess[];
  /** (owner, on_type) of every stored global default ACL row (PUBLIC may have lost a built-in there). */
  readonly global_default_pairs: readonly { readonly owner: string; readonly on_type: ObjectType }[];
}
