// Reads exactly a managed scope into a CatalogSnapshot: all reads in ONE REPEATABLE READ READ ONLY
// transaction, array-bound queries only; the pure derive-* functions turn rows into the snapshot.

import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';

import {
  compareCodePoints,
  logicalFingerprint,
  PUBLIC_GRANTEE,
  type CatalogSnapshot,
  type FunctionSignature,
  type InventoryObject,
  type ManagedScope,
  type TargetIdentity,
} from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';

import { DefaultPrivilegeRepository, type GlobalDefaultPair } from './default-privilege.repository.js';
import { groupAclRows, narrowPublicRows, objectTypeOfRow } from './derive-grants.js';
import {
  DEFAULT_ACL_LETTERS,
  deriveDefaultPrivileges,
  deriveMemberships,
  deriveRoles,
  deriveSchemas,
} from './derive-state.js';
import {
  findWildcardGaps,
  grantabilityQuestions,
  inventoryKindOf,
  snapshotInventory,
  unsatisfiableWildcards,
} from './derive-wildcards.js';
import { argumentListStart, typesOnlyArguments } from './function-signature.js';
import { InventoryRepository, type SignatureLookup } from './inventory.repository.js';

import { MembershipRepository } from './membership.repository.js';
import { ObjectAclRepository, type AclRow } from './object-acl.repository.js';
import type { PgCatalog } from './pg-catalog.tables.js';
import { SafeError } from './redaction.js';
import { readReviewFactsIn, type ReviewFactsQuery } from './review-facts.js';
import { RoleRepository, type ExecutorRow } from './role.repository.js';
import { SchemaRepository } from './schema.repository.js';
import { ServerRepository, type ServerRow } from './server.repository.js';

/** Where the connection points (never credentials); feeds the logical fingerprint. */
export interface TargetAddress {
  readonly host: string;
  readonly port: number;
  readonly database: string;
}

/** Raised when the scope cannot be read as asked (e.g. a database grant names another database). */
export class InspectionError extends SafeError {
  override readonly name = 'InspectionError';
}

/** The code an inspection reply carries for a database grant naming a database other than the connected one. */
export const INVALID_DATABASE_TARGET = 'InvalidDatabaseTarget';

/** A database grant names a database other than the connected one (the policy must be fixed). */
export class DatabaseTargetError extends InspectionError {
  readonly code = INVALID_DATABASE_TARGET;
}

/** SQLSTATEs that mean "this server does not expose its system identifier to us". */
const IDENTITY_UNAVAILABLE = new Set(['42883', '42501']);

function sqlState(error: unknown): string | null {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : null;
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareCodePoints);
}

/** Builds the to_regprocedure lookup text `"schema"."base"(args)` for a declared function name. */
export function signatureLookup(schema: string, declared: string): SignatureLookup {
  const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;
  const open = argumentListStart(declared);
  if (open < 0) return { schema, declared, lookup: `${quote(schema)}.${quote(declared)}`, has_args: false };
  const close = declared.lastIndexOf(')');
  const argumentText = declared.slice(open + 1, close > open ? close : undefined);
  return {
    schema,
    declared,
    lookup: `${quote(schema)}.${quote(declared.slice(0, open))}(${typesOnlyArguments(argumentText)})`,
    has_args: true,
  };
}

/**
 * Inspects the managed scope. `target` (host, port, database of the connection) feeds the logical
 * fingerprint; pass null when it is unknown.
 * @example `const snapshot = await inspect(db, deriveManagedScope(desired), { host, port, database });`
 */
export async function inspect(
  db: Kysely<PgCatalog>,
  scope: ManagedScope,
  target: TargetAddress | null,
): Promise<CatalogSnapshot> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((trx) => readScope(trx, scope, target));
}

/**
 * {@link inspect} plus the review facts of `query`, both read in the same REPEATABLE READ READ ONLY
 * transaction (the review artifact's preflight then describes the instant the plan was computed from).
 */
export async function inspectWithReviewFacts(
  db: Kysely<PgCatalog>,
  scope: ManagedScope,
  target: TargetAddress | null,
  query: ReviewFactsQuery,
): Promise<{ snapshot: CatalogSnapshot; facts: ReviewFacts }> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const snapshot = await readScope(trx, scope, target);
      const facts = await readReviewFactsIn(trx, query, snapshot.server_version_num);
      return { snapshot, facts };
    });
}

/** The system identifier, or null when the server does not expose it to us (42883/42501). */
export async function readPhysicalIdentity(trx: Transaction<PgCatalog>): Promise<string | null> {
  // A failed statement aborts the transaction; the savepoint keeps the other reads usable.
  await sql`SAVEPOINT rolepolicy_identity`.execute(trx);
  try {
    const physical = await new ServerRepository(trx).systemIdentifier();
    await sql`RELEASE SAVEPOINT rolepolicy_identity`.execute(trx);
    return physical;
  } catch (error) {
    if (!IDENTITY_UNAVAILABLE.has(sqlState(error) ?? '')) throw error;
    await sql`ROLLBACK TO SAVEPOINT rolepolicy_identity`.execute(trx);
    return null;
  }
}

/**
 * What a read of the same transaction already holds and the snapshot needs too: the server, the executor and
 * the physical identity (the fingerprint reads them first). Reused, the snapshot carries exactly what the
 * fingerprint hashed, even for `member_of`, which `pg_has_role` answers from the catalog cache rather than
 * the transaction's snapshot.
 */
export interface SessionFacts {
  readonly server: ServerRow;
  readonly executor: ExecutorRow;
  readonly physical: string | null;
}

function checkDatabaseTargets(scope: ManagedScope, server: ServerRow): void {
  const foreign = scope.database_targets.filter((name) => name !== server.current_database);
  if (foreign.length > 0) {
    throw new DatabaseTargetError(
      `database grant target ${foreign.map((name) => `"${name}"`).join(', ')} does not match connected database "${server.current_database}"; database grants must name the database the connection opens`,
    );
  }
}

/**
 * Reads the snapshot inside the caller's transaction (see {@link inspect}); `known`, read earlier in the same
 * transaction, is used instead of reading the server, the executor and the identity again.
 */
export async function readScope(
  trx: Transaction<PgCatalog>,
  scope: ManagedScope,
  target: TargetAddress | null,
  known?: SessionFacts,
): Promise<CatalogSnapshot> {
  const roles = new RoleRepository(trx);
  const acls = new ObjectAclRepository(trx);
  const inventoryRepository = new InventoryRepository(trx);

  const server = known?.server ?? (await new ServerRepository(trx).server());
  checkDatabaseTargets(scope, server);
  const executor = known?.executor ?? (await roles.executor());
  const physical = known === undefined ? await readPhysicalIdentity(trx) : known.physical;
  const identity: TargetIdentity = {
    physical,
    physical_available: physical !== null,
    logical_fingerprint: target ? logicalFingerprint(target.host, target.port, target.database) : null,
  };

  const managedRoles = new Set(scope.roles);
  const roleRows = scope.roles.length > 0 ? await roles.findRoles(scope.roles) : [];
  const referenced = sortedUnique([
    ...scope.roles,
    ...scope.membership_grantors,
    ...scope.default_privilege_scopes.map((key) => key.owner),
    ...scope.wildcards.map((wildcard) => wildcard.grantee).filter((grantee) => grantee !== PUBLIC_GRANTEE),
  ]);
  const existing = referenced.length > 0 ? await roles.existingRoles(referenced) : [];
  const granted = sortedUnique([...scope.roles, ...scope.membership_grantors]);
  const membershipRows =
    granted.length > 0
      ? await new MembershipRepository(trx).findMemberships(granted, server.server_version_num)
      : [];
  const schemaNames = sortedUnique([...scope.schemas, ...scope.owned_schemas]);
  const schemaRows = schemaNames.length > 0 ? await new SchemaRepository(trx).findSchemas(schemaNames) : [];

  const signatures: FunctionSignature[] =
    scope.function_signatures.length > 0
      ? await inventoryRepository.functionSignatures(
          scope.function_signatures.map((pair) => signatureLookup(pair.schema, pair.name)),
        )
      : [];

  const aclRows = await readAclRows(acls, scope, signatures);
  // An owner's own row only marks ownership (it feeds the inventory below): owners hold every privilege
  // implicitly, so it is never a grant (reporting it made authoritative mode revoke owners' privileges).
  const grants = groupAclRows(aclRows.filter((row) => row.grantee !== row.owner));

  const defaultRows = await readDefaultRows(new DefaultPrivilegeRepository(trx), scope);

  const inventoryScopes = scope.wildcards.flatMap((wildcard) => {
    const kind = inventoryKindOf(wildcard.object_type);
    return kind === null ? [] : [{ kind, schema: wildcard.schema }];
  });
  const inventoryRows =
    inventoryScopes.length > 0 ? await inventoryRepository.inventory(inventoryScopes) : [];
  const aclObjects: InventoryObject[] = aclRows.flatMap((row) => {
    const kind = inventoryKindOf(objectTypeOfRow(row.kind) ?? '');
    return kind !== null && row.schema !== null
      ? [{ kind, schema: row.schema, name: row.name, owner: row.owner }]
      : [];
  });

  // Grantability is read lazily: only when some wildcard is unsatisfied and the executor is not superuser.
  const gaps = executor.superuser ? [] : findWildcardGaps(scope.wildcards, inventoryRows, grants);
  const answers = gaps.length > 0 ? await inventoryRepository.grantability(grantabilityQuestions(gaps)) : [];

  return {
    server_version_num: server.server_version_num,
    current_database: server.current_database,
    executor,
    identity,
    roles: deriveRoles(roleRows),
    schemas: deriveSchemas(schemaRows),
    grants,
    default_privileges: deriveDefaultPrivileges(defaultRows, managedRoles, scope.default_privilege_scopes),
    memberships: deriveMemberships(membershipRows, executor, server.server_version_num),
    inventory: snapshotInventory(inventoryRows, aclObjects),
    unsatisfiable_wildcards: unsatisfiableWildcards(gaps, answers, executor.role),
    existing_roles: existing,
    function_signatures: signatures,
  };
}

/**
 * Explicit ACL rows of managed roles in managed schemas (and the database when a rule names it), and the
 * PUBLIC rows PUBLIC rules name.
 */
async function readAclRows(
  acls: ObjectAclRepository,
  scope: ManagedScope,
  signatures: readonly FunctionSignature[],
): Promise<AclRow[]> {
  const aclRows: AclRow[] = [];
  if (scope.roles.length > 0 && scope.schemas.length > 0) {
    aclRows.push(...(await acls.relationGrants(scope.schemas, scope.roles)));
    aclRows.push(...(await acls.functionGrants(scope.schemas, scope.roles)));
    aclRows.push(...(await acls.typeGrants(scope.schemas, scope.roles)));
    aclRows.push(...(await acls.schemaGrants(scope.schemas, scope.roles)));
  }
  if (scope.roles.length > 0 && scope.include_database_privileges) {
    aclRows.push(...(await acls.databaseGrants(scope.roles)));
  }
  aclRows.push(...narrowPublicRows(await readPublicRows(acls, scope), scope.public_objects, signatures));
  return aclRows;
}

/** Default privileges: the per-schema layer of managed schemas, and the global layer of the owners named. */
async function readDefaultRows(defaults: DefaultPrivilegeRepository, scope: ManagedScope) {
  const defaultRows = scope.schemas.length > 0 ? await defaults.schemaLayer(scope.schemas) : [];
  const globalPairs: GlobalDefaultPair[] = scope.default_privilege_scopes.flatMap((key) => {
    const letters = DEFAULT_ACL_LETTERS[key.on_type];
    return key.scope.type === 'global' && letters
      ? [{ owner: key.owner, objtype: letters.stored, acldefault: letters.acldefault }]
      : [];
  });
  if (globalPairs.length > 0) defaultRows.push(...(await defaults.globalLayer(globalPairs)));
  return defaultRows;
}

/** PUBLIC rows, read only for the families and schemas PUBLIC rules name. */
async function readPublicRows(acls: ObjectAclRepository, scope: ManagedScope): Promise<AclRow[]> {
  const rows: AclRow[] = [];
  const schemasFor = (types: readonly string[]): string[] =>
    sortedUnique(
      scope.public_objects
        .filter((rule) => types.includes(rule.object_type) && rule.schema !== null)
        .map((rule) => rule.schema!),
    );
  const relationSchemas = schemasFor(['table', 'view', 'materialized_view', 'sequence']);
  if (relationSchemas.length > 0) rows.push(...(await acls.relationPublicRows(relationSchemas)));
  const functionSchemas = schemasFor(['function']);
  if (functionSchemas.length > 0) rows.push(...(await acls.functionPublicRows(functionSchemas)));
  const typeSchemas = schemasFor(['type']);
  if (typeSchemas.length > 0) rows.push(...(await acls.typePublicRows(typeSchemas)));
  const schemaTargets = sortedUnique(
    scope.public_objects
      .filter((rule) => rule.object_type === 'schema')
      .map((rule) => rule.name ?? rule.schema)
      .filter((name): name is string => name !== null),
  );
  if (schemaTargets.length > 0) rows.push(...(await acls.schemaPublicRows(schemaTargets)));
  if (scope.public_objects.some((rule) => rule.object_type === 'database')) {
    rows.push(...(await acls.databasePublicRows()));
  }
  return rows;
}
