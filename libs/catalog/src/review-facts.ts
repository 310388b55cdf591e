// readReviewFacts: the catalog facts the review artifact's preflight needs next to a plan's snapshot,
// read in one REPEATABLE READ READ ONLY transaction as the executing role.

import type { Kysely } from 'kysely';
import type { Change } from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';

import type { PgCatalog } from './pg-catalog.tables.js';
import { ReviewFactsRepository } from './review-facts.repository.js';
import { RoleRepository } from './role.repository.js';

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
  const dropped = [...new Set(changes.flatMap((c) => (c.kind === 'drop_role' ? [c.name] : [])))];
  const predefined = [
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
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const repository = new ReviewFactsRepository(trx);
      const edges = await repository.executorEdges(serverVersionNum);
      const drops = dropped.length > 0 ? await repository.dropRoleFacts(dropped) : [];
      const existing = predefined.length > 0 ? await new RoleRepository(trx).existingRoles(predefined) : [];
      return {
        executor_memberships: edges.map((e) => ({ ...e })),
        drop_roles: drops.map((d) => ({ ...d })),
        predefined_roles: existing,
      };
    });
}
