// In-process mutual exclusion per database, in front of the PostgreSQL advisory lock: with several
// requests in flight per replica, a second request for a database that this replica is already working
// on waits here (no connection, no pool, no lock_timeout) instead of inside PostgreSQL, and requests for
// other databases are not held up at all (`KeyedMutex` of @rolepolicy/runtime). The advisory lock stays
// the guarantee across replicas.

/**
 * The mutex key of a request: the connection reference the plan's digest binds (`target`) in the policy's
 * namespace. Aliases of one database through different Secrets get different keys; the advisory lock
 * (keyed by the database itself) still serialises them, they only wait inside PostgreSQL.
 */
export function databaseKey(request: {
  readonly policy: { readonly namespace: string };
  readonly target: string;
}): string {
  return `${request.policy.namespace}\u0000${request.target}`;
}
