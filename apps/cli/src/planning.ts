// The plan pipeline the CLI shares between `inspect`, `plan` and `apply`: expand, derive the managed
// scope, inspect, compute the plan, render (redacted preview) and digest. I/O only through the catalog.

import {
  changeDigest,
  computePlan,
  deriveManagedScope,
  expandPolicy,
  renderSql,
  type CatalogSnapshot,
  type ChangeDigest,
  type DesiredState,
  type ManagedScope,
  type PlanResult,
  type PolicyContent,
  type ReconciliationMode,
  type RenderedSql,
} from '@rolepolicy/policy';
import { inspect, withRedaction, type CatalogConnection } from '@rolepolicy/catalog';

import { CliError, EXIT } from './io.js';
import { cliPasswordSources, previewVerifiers } from './passwords.js';

/** What one planning pass needs. */
export interface PlanningInput {
  readonly desired: DesiredState;
  readonly scope: ManagedScope;
  readonly mode: ReconciliationMode;
  readonly allowSchemaOwnerTransfers: boolean;
  readonly rotatePasswords: boolean;
}

/** One planning pass: what was seen, what would change, the preview SQL and the approval digest. */
export interface CliPlan {
  readonly snapshot: CatalogSnapshot;
  readonly plan: PlanResult;
  readonly preview: RenderedSql;
  readonly digest: ChangeDigest;
}

/** Expands content (all validation and expansion errors with their paths) into the desired state. */
export function expandOrThrow(content: unknown, policyName: string): DesiredState {
  const expansion = expandPolicy(content as PolicyContent, { policyName });
  if (!expansion.ok) {
    throw new CliError(
      [
        'the policy is invalid:',
        ...expansion.errors.map((error) => `  ${error.path}: ${error.message}`),
      ].join('\n'),
      EXIT.error,
    );
  }
  return expansion.desired;
}

/** Builds the planning input for desired state and mode. */
export function planningInput(
  desired: DesiredState,
  options: {
    mode?: ReconciliationMode | undefined;
    allowSchemaOwnerTransfers: boolean;
    rotatePasswords: boolean;
  },
): PlanningInput {
  return {
    desired,
    scope: deriveManagedScope(desired),
    mode: options.mode ?? desired.reconciliation_mode,
    allowSchemaOwnerTransfers: options.allowSchemaOwnerTransfers,
    rotatePasswords: options.rotatePasswords,
  };
}

/** The digest's target reference for a URL connection: host, port and database, never credentials. */
export function targetReference(connection: CatalogConnection): string {
  const { host, port, database } = connection.target;
  return `url:${host}:${port}/${database}`;
}

/** Inspects the scope and computes plan, preview and digest. */
export async function planOnce(connection: CatalogConnection, input: PlanningInput): Promise<CliPlan> {
  const snapshot = await withRedaction(connection, () =>
    inspect(connection.db, input.scope, connection.target),
  );
  return planFromSnapshot(connection, input, snapshot);
}

/** Computes plan, preview and digest for a snapshot already read. */
export function planFromSnapshot(
  connection: CatalogConnection,
  input: PlanningInput,
  snapshot: CatalogSnapshot,
): CliPlan {
  const passwords = cliPasswordSources(input.desired, input.rotatePasswords);
  const plan = computePlan({
    desired: input.desired,
    snapshot,
    mode: input.mode,
    passwordSources: passwords.sources,
    appliedPasswordSourceVersions: passwords.applied,
    allowSchemaOwnerTransfers: input.allowSchemaOwnerTransfers,
  });
  const preview = renderSql(plan.changes, {
    serverVersionNum: snapshot.server_version_num,
    inventory: snapshot.inventory,
    passwords: previewVerifiers(plan.changes),
    executorRole: snapshot.executor.role,
  });
  const digest = changeDigest({
    mode: input.mode,
    target: targetReference(connection),
    targetPhysicalIdentity: snapshot.identity.physical,
    targetLogicalFingerprint: snapshot.identity.logical_fingerprint,
    ownedRoles: input.scope.roles,
    ownedSchemas: input.scope.schemas,
    changes: plan.changes,
  });
  return { snapshot, plan, preview, digest };
}
