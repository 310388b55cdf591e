// readReviewFacts: the catalog facts the review artifact's preflight needs next to a plan's snapshot,
// read in one REPEATABLE READ READ ONLY transaction as the executing role.

import type { Kysely } from 'kysely';
import type { Change } from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';

import type { PgCatalog } from './pg-catalog.tables.js';
import { ReviewFactsRepository } from './review-facts.repository.js';
import { RoleRepository } from './role.repository.js';

/** The roles whose review facts to read: planned drops and `pg_*` roles a plan names. */
export interface ReviewFactsQuery {
  readonly dropRoles: readonly string[];
  readonly predefinedRoles: readonly string[];
}

/** The roles `changes` drop and the `pg_*` roles they name (what {@link readReviewFacts} reads for them). */
export function reviewFactsQueryOf(changes: readonly Change[]): ReviewFactsQuery {
  const dropRoles = [...new Set(changes.flatMap((c) => (c.kind === 'drop_role' ? [c.name] : [])))];
  const predefinedRoles = [
    ...new Set(
      changes.flatMap((c) =>
        c.kind === 'add_member' || c.kind === 'remove_member'
          ? [c.role, c.member]
          : c.kind === 'grant' || c.kind === 'revoke'
            ? [c.role]
            : [],
      ),
    ),
  ].filter((r) => r.startsWith('pg_'));
  return { dropRoles, predefinedRoles };
}

/**
 * Reads the review facts inside a transaction the caller opened (the inspector reads them in the
 * snapshot's REPEATABLE READ transaction, so both describe the same instant).
 */
export async function readReviewFactsIn(
  trx: Kysely<PgCatalog>,
  query: ReviewFactsQuery,
  serverVersionNum: number,
): Promise<ReviewFacts> {
  const dropped = [...new Set(query.dropRoles)];
  const predefined = [...new Set(query.predefinedRoles)].filter((r) => r.startsWith('pg_'));
  const repository = new ReviewFactsRepository(trx);
  const edges = await repository.executorEdges(serverVersionNum);
  const drops = dropped.length > 0 ? await repository.dropRoleFacts(dropped) : [];
  const existing = predefined.length > 0 ? await new RoleRepository(trx).existingRoles(predefined) : [];
  return {
    executor_memberships: edges.map((e) => ({ ...e })),
    drop_roles: drops.map((d) => ({ ...d })),
    predefined_roles: existing,
  };
}

/**
 * Reads the executor's membership edges, the dependencies of every role `changes` drop, and which `pg_*`
 * roles the changes name exist on this server.
 * @example `const facts = await readReviewFacts(connection.db, plan.changes, snapshot.server_version_num);`
 */
export async function readReviewFacts(
  db: Kysely<PgCatalog>,
  changes: readonly Change[],
  serverVersionNum: number,
): Promise<ReviewFacts> {
  const query = reviewFactsQueryOf(changes);
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((trx) => readReviewFactsIn(trx, query, serverVersionNum));
}
