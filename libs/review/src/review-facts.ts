// Catalog facts the review's preflight needs beyond the plan's snapshot: the executor's own membership
// edges (authority graph) and what stands in the way of each planned DROP ROLE. libs/catalog reads them.

import type { MembershipEdge } from '@rolepolicy/policy';

/** What still depends on a role the plan drops (pg_shdepend and pg_stat_activity; engine notes 6.1). */
export interface DropRoleFacts {
  readonly role: string;
  /** Objects the role owns in the connected database. */
  readonly owned_current: number;
  /** Shared objects it owns (databases, tablespaces). */
  readonly owned_shared: number;
  /** Objects it owns in other databases: REASSIGN/DROP OWNED here cannot reach them. */
  readonly owned_other: number;
  /** Privileges granted to it in this database (or on shared objects). */
  readonly acl_current: number;
  /** Privileges granted to it in other databases. */
  readonly acl_other: number;
  /** Other sessions connected as the role. */
  readonly sessions: number;
  /** Up to 5 `pg_describe_object` texts of what it owns or holds, for the message. */
  readonly examples: readonly string[];
  /** Roles it is a member of. */
  readonly member_of: readonly string[];
  /** Roles that are members of it. */
  readonly members: readonly string[];
}

/**
 * Facts read next to the snapshot, in the same database session.
 * `executor_memberships`: every edge whose member is the executor or a role the executor belongs to, so the
 * executor's access can be simulated phase by phase (a graph missing them makes authority `unknown`).
 */
export interface ReviewFacts {
  readonly executor_memberships: readonly MembershipEdge[];
  readonly drop_roles: readonly DropRoleFacts[];
  /** `pg_*` roles the plan names that the server has (a missing one is a server_compatibility issue). */
  readonly predefined_roles: readonly string[];
}
