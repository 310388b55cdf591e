// The live-state snapshot: the contract between libs/catalog (which reads it) and the diff (which reads it).
// JSON-safe so it can travel over the messaging spine unchanged.

import type { DefaultPrivilegeEntry, GrantEntry, MembershipEdge, RoleEntry, SchemaEntry } from './state.js';
import type { Privilege } from './vocabulary.js';

/** Relation-like and routine kinds the wildcard inventory lists per schema. */
export type InventoryKind = 'table' | 'view' | 'materialized_view' | 'sequence' | 'function' | 'type';

/** One object in a wildcard scope, with its owner (for grantability reports). */
export interface InventoryObject {
  readonly kind: InventoryKind;
  readonly schema: string;
  /** Relation/type name, or `proname(identity args)` for functions. */
  readonly name: string;
  readonly owner: string;
}

/** A present wildcard the executor cannot satisfy on some objects (blocks the plan instead of churning). */
export interface UnsatisfiableWildcardGrant {
  readonly grantee: string;
  readonly object_type: InventoryKind;
  readonly schema: string;
  readonly privileges: readonly Privilege[];
  readonly executor: string;
  readonly count: number;
  readonly examples: readonly { readonly name: string; readonly owner: string }[];
}

/** Where the snapshot was read and what it could see of the target's identity. */
export interface TargetIdentity {
  /** `pg_control_system().system_identifier` as an unsigned decimal string; null when unavailable. */
  readonly physical: string | null;
  /** False only when reading it failed with SQLSTATE 42883 or 42501. */
  readonly physical_available: boolean;
  /** `sha256:<hex>` of lower(host) NUL port NUL database; computed from the connection, never credentials. */
  readonly logical_fingerprint: string | null;
}

/** The role the inspector/executor acts as (after `SET ROLE`). */
export interface ExecutorIdentity {
  readonly role: string;
  readonly superuser: boolean;
  readonly createrole: boolean;
  /** Roles the executor is a member of (transitively), for authority checks; empty for a superuser. */
  readonly member_of: readonly string[];
}

/**
 * Live state of exactly the managed scope of one (or a union of) policies.
 * Role-grantee rows only for managed roles; PUBLIC rows only for declared PUBLIC rules.
 */
export interface CatalogSnapshot {
  /** `server_version_num`, e.g. 150019. */
  readonly server_version_num: number;
  readonly current_database: string;
  readonly executor: ExecutorIdentity;
  readonly identity: TargetIdentity;
  /** Managed roles that exist (absent roles are simply missing). */
  readonly roles: readonly RoleEntry[];
  /** Managed schemas that exist. */
  readonly schemas: readonly SchemaEntry[];
  /** Explicit object ACL rows for managed grantees (owner self-grants on schemas removed). */
  readonly grants: readonly GrantEntry[];
  readonly default_privileges: readonly DefaultPrivilegeEntry[];
  readonly memberships: readonly MembershipEdge[];
  /** All objects of each wildcard (kind, schema) scope, plus objects seen in ACL rows. */
  readonly inventory: readonly InventoryObject[];
  readonly unsatisfiable_wildcards: readonly UnsatisfiableWildcardGrant[];
  /** Roles (among the managed and referenced ones) that exist in the cluster, managed or not. */
  readonly existing_roles: readonly string[];
  /** Declared function signatures resolved through to_regprocedure; identity null when no such function. */
  readonly function_signatures: readonly FunctionSignature[];
}

/** A function as the policy names it (`f(integer)`) and as the catalog keys it (`f(p_id integer)`). */
export interface FunctionSignature {
  readonly schema: string;
  readonly declared: string;
  /** `proname(pg_get_function_identity_arguments(oid))`, or null when the function does not exist. */
  readonly identity: string | null;
}
