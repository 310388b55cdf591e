// The catalog fingerprint of a managed scope: one digest over everything the inspection could derive the
// snapshot from, computed in the database. Equal fingerprints mean the snapshot, and so the plan, would be equal.

import type { Kysely, Transaction } from 'kysely';

import {
  canonicalJson,
  compareCodePoints,
  PUBLIC_GRANTEE,
  sha256Digest,
  type CatalogSnapshot,
  type ManagedScope,
} from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';

import { FingerprintRepository, type FingerprintScope } from './fingerprint.repository.js';
import {
  readPhysicalIdentity,
  readScope,
  signatureLookup,
  type SessionFacts,
  type TargetAddress,
} from './inspect.js';
import { InventoryRepository } from './inventory.repository.js';
import type { PgCatalog } from './pg-catalog.tables.js';
import { readReviewFactsIn, type ReviewFactsQuery } from './review-facts.js';
import { RoleRepository } from './role.repository.js';
import { ServerRepository } from './server.repository.js';

/** Tags the fingerprint's encoding: a change to what it covers must change this, so old values never match. */
export const CATALOG_FINGERPRINT_VERSION = 'rolepolicy.io/catalog-fingerprint/v1';

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareCodePoints);
}

/** The name arrays the fingerprint binds: a superset of every name the inspection reads by. */
export function fingerprintScopeOf(scope: ManagedScope): FingerprintScope {
  return {
    roles: sortedUnique([
      ...scope.roles,
      ...scope.membership_grantors,
      ...scope.default_privilege_scopes.map((key) => key.owner),
      ...scope.wildcards.map((w) => w.grantee).filter((grantee) => grantee !== PUBLIC_GRANTEE),
    ]),
    granted: sortedUnique([...scope.roles, ...scope.membership_grantors]),
    schemas: sortedUnique([
      ...scope.schemas,
      ...scope.owned_schemas,
      ...scope.wildcards.map((w) => w.schema),
      ...scope.public_objects.flatMap((rule) => (rule.schema === null ? [] : [rule.schema])),
      ...scope.public_objects.flatMap((rule) =>
        rule.object_type === 'schema' && rule.name !== null ? [rule.name] : [],
      ),
      ...scope.default_privilege_scopes.flatMap((key) =>
        key.scope.type === 'schema' ? [key.scope.schema] : [],
      ),
      ...scope.function_signatures.map((pair) => pair.schema),
    ]),
    globalDefaultOwners: sortedUnique(
      scope.default_privilege_scopes.filter((key) => key.scope.type === 'global').map((key) => key.owner),
    ),
  };
}

/**
 * The fingerprint of `scope` as `trx` sees it, or null when it cannot stand for the inspection (a database
 * grant names another database: the inspection fails, so the full path must run and say so).
 */
export async function readFingerprint(trx: Kysely<PgCatalog>, scope: ManagedScope): Promise<string | null> {
  return (await readFingerprintWithFacts(trx, scope))?.fingerprint ?? null;
}

/** {@link readFingerprint} with the session facts it read, for a snapshot read next in the same transaction. */
async function readFingerprintWithFacts(
  trx: Kysely<PgCatalog>,
  scope: ManagedScope,
): Promise<{ readonly fingerprint: string; readonly facts: SessionFacts } | null> {
  const server = await new ServerRepository(trx).server();
  if (scope.database_targets.some((name) => name !== server.current_database)) return null;
  const repository = new FingerprintRepository(trx);
  const names = fingerprintScopeOf(scope);
  const parts = await repository.parts(names);
  // A superuser is a member of every role: its member_of would change with any role created anywhere in
  // the cluster, and nothing reads it then (grantability and grantor checks are skipped for superusers).
  const row = await new RoleRepository(trx).executor();
  const executor = row.superuser ? { ...row, member_of: [] } : row;
  const physical = await readPhysicalIdentity(trx as Transaction<PgCatalog>);
  const verifiers = await repository.verifiers(scope.roles);
  const signatures =
    scope.function_signatures.length > 0
      ? await new InventoryRepository(trx).functionSignatures(
          scope.function_signatures.map((pair) => signatureLookup(pair.schema, pair.name)),
        )
      : [];
  const fingerprint = sha256Digest(
    canonicalJson({
      version: CATALOG_FINGERPRINT_VERSION,
      server,
      physical,
      executor,
      parts,
      verifiers,
      signatures,
    }),
  );
  return { fingerprint, facts: { server, executor: row, physical } };
}

/** A fingerprint-aware inspection's answer. */
export type ConditionalInspection =
  | { readonly kind: 'unchanged'; readonly fingerprint: string }
  | {
      readonly kind: 'snapshot';
      readonly snapshot: CatalogSnapshot;
      /** The fingerprint of the state the snapshot was read from; null when none stands for it. */
      readonly fingerprint: string | null;
      readonly facts?: ReviewFacts;
    };

/** Options of {@link inspectUnlessUnchanged}. */
export interface ConditionalInspectionOptions {
  /** The fingerprint recorded at the last convergence: when it still holds, nothing else is read. */
  readonly unless?: string;
  /** Also read the review facts (full path only), as {@link inspectWithReviewFacts} does. */
  readonly review?: ReviewFactsQuery;
}

/**
 * Reads the scope's fingerprint and, unless it equals `options.unless`, the snapshot, both in ONE
 * REPEATABLE READ READ ONLY transaction: the returned fingerprint describes exactly the state the snapshot
 * was read from, so a fingerprint recorded with an empty diff can never stand for a different state.
 * @example `const read = await inspectUnlessUnchanged(db, scope, target, { unless: recorded });`
 */
export async function inspectUnlessUnchanged(
  db: Kysely<PgCatalog>,
  scope: ManagedScope,
  target: TargetAddress | null,
  options: ConditionalInspectionOptions = {},
): Promise<ConditionalInspection> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx): Promise<ConditionalInspection> => {
      const read = await readFingerprintWithFacts(trx, scope);
      const fingerprint = read?.fingerprint ?? null;
      if (fingerprint !== null && options.unless !== undefined && fingerprint === options.unless) {
        return { kind: 'unchanged', fingerprint };
      }
      // The server, executor and identity the fingerprint just hashed, not read a second time.
      const snapshot = await readScope(trx, scope, target, read?.facts);
      if (options.review === undefined) return { kind: 'snapshot', snapshot, fingerprint };
      const facts = await readReviewFactsIn(trx, options.review, snapshot.server_version_num);
      return { kind: 'snapshot', snapshot, fingerprint, facts };
    });
}
