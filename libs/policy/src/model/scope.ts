// The managed scope: exactly what inspection must read for a policy (never the whole catalog).
// Derived from the desired state; sent to the inspector; unioned across candidates of one database.

import type { DefaultPrivilegeScope } from './state.js';
import type { Grantee, ObjectType, Privilege } from './vocabulary.js';

/** A present `*` grant: the inventory and grantability of (type, schema) are needed. */
export interface WildcardScope {
  readonly grantee: Grantee;
  readonly object_type: ObjectType;
  readonly schema: string;
  readonly privileges: readonly Privilege[];
}

/** A PUBLIC rule's target: PUBLIC ACL rows (with acldefault built-ins) are read only here. */
export interface PublicObjectScope {
  readonly object_type: ObjectType;
  readonly schema: string | null;
  /** Object name, `*`, schema name (schema grants) or database name. */
  readonly name: string | null;
  readonly privileges: readonly Privilege[];
}

/** A declared (owner, scope, on_type) default-privilege pattern, with the PUBLIC privileges it names. */
export interface DefaultPrivilegeScopeKey {
  readonly owner: string;
  readonly scope: DefaultPrivilegeScope;
  readonly on_type: ObjectType;
  readonly public_privileges: readonly Privilege[];
}

/** What inspection reads. Every list sorted and de-duplicated. */
export interface ManagedScope {
  /** Every expanded role (generated, one-off and external) plus retirement roles. */
  readonly roles: readonly string[];
  /** `pg_*` roles named as granted roles: widen only the membership read. */
  readonly membership_grantors: readonly string[];
  /** Schemas with a binding, named by a grant, or by a schema-scoped default. */
  readonly schemas: readonly string[];
  /** Schemas whose owner the policy declares (artifact `owner` facet). */
  readonly owned_schemas: readonly string[];
  readonly wildcards: readonly WildcardScope[];
  readonly public_objects: readonly PublicObjectScope[];
  readonly default_privilege_scopes: readonly DefaultPrivilegeScopeKey[];
  readonly include_database_privileges: boolean;
  /** Names on database grants; each must equal current_database(). */
  readonly database_targets: readonly string[];
  /** Function signatures named in grants, to normalise through to_regprocedure: (schema, name) pairs. */
  readonly function_signatures: readonly { readonly schema: string; readonly name: string }[];
}
