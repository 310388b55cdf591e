// The one constructor of a ComputedPlan: the engine's plan of the expanded content against a snapshot, its
// change digest and redacted SQL preview, summarised as the decision table reads it. The planner's passes
// and the benches that send what the planner sends (bench/gateway-commands.ts) build plans here, so a field
// added to ComputedPlan is filled in one place.
import {
  changeDigest,
  computePlan,
  contentDigest,
  passwordSourceDigest,
  renderSql,
  scramSha256Verifier,
  SCRAM_SALT_LENGTH,
  type Change,
  type ManagedScope,
  type PlanInput,
  type PlanResult,
} from '@rolepolicy/policy';
import type { ComputedPlan } from './outcome.js';

/** What a plan is computed from (no I/O left): the engine's input (its mode is the content's) and more. */
export interface PlanComputationInput extends Omit<PlanInput, 'mode'> {
  /** `spec` of the policy (content digest input). */
  readonly spec: unknown;
  readonly scope: ManagedScope;
  /** The digest's target reference (`host:port/dbname` as `resolveConnection` gives it). */
  readonly target: string;
  /** `<namespace>/<shown address>`: the database as a status may show it, never credentials. */
  readonly managedDatabaseIdentity: string;
  /** RFC 3339 time the snapshot was requested (see `ComputedPlan.snapshotRequestedAt`). */
  readonly snapshotRequestedAt: string | null;
}

/** Throwaway verifiers so the preview renders; the executor computes the real ones under its lock. */
function previewVerifiers(changes: readonly Change[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const change of changes) {
    if (change.kind === 'set_password') {
      out[change.name] = scramSha256Verifier(`preview-${change.name}`, Buffer.alloc(SCRAM_SALT_LENGTH), 1);
    }
  }
  return out;
}

/**
 * The plan summary of `input` with the engine's plan it summarises (a review artifact is built from that
 * very result). Throws what the engine throws (`ChangeDigestError`, a rendering error): the caller decides
 * what a failure is.
 */
export function computePlanSummary(input: PlanComputationInput): {
  readonly computed: ComputedPlan;
  readonly plan: PlanResult;
} {
  const { desired, scope, snapshot } = input;
  const mode = desired.reconciliation_mode;
  const plan = computePlan({
    desired,
    snapshot,
    mode,
    passwordSources: input.passwordSources,
    appliedPasswordSourceVersions: input.appliedPasswordSourceVersions,
    allowSchemaOwnerTransfers: input.allowSchemaOwnerTransfers,
  });
  const digest = changeDigest({
    mode,
    target: input.target,
    targetPhysicalIdentity: snapshot.identity.physical,
    targetLogicalFingerprint: snapshot.identity.logical_fingerprint,
    ownedRoles: scope.roles,
    ownedSchemas: scope.schemas,
    changes: plan.changes,
  });
  const rendered = renderSql(plan.changes, {
    serverVersionNum: snapshot.server_version_num,
    inventory: snapshot.inventory,
    passwords: previewVerifiers(plan.changes),
    executorRole: snapshot.executor.role,
  });
  const computed: ComputedPlan = {
    changeDigest: digest.digest,
    changeDigestEncoding: digest.encoding,
    changeCount: plan.changes.length,
    summary: plan.summary,
    warnings: plan.warnings,
    ownerTransferBlocked: plan.ownerTransferBlocked,
    additiveIgnoredAbsence: plan.additiveIgnoredAbsence,
    blockers: plan.blockers,
    identity: {
      physical: snapshot.identity.physical,
      physicalAvailable: snapshot.identity.physical_available,
      logicalFingerprint: snapshot.identity.logical_fingerprint,
    },
    managedDatabaseIdentity: input.managedDatabaseIdentity,
    reconciliationMode: mode,
    ownedRoles: scope.roles,
    ownedSchemas: scope.schemas,
    contentDigest: contentDigest(input.spec).digest,
    passwordSourceVersions: input.passwordSources,
    passwordSourceDigest:
      Object.keys(input.passwordSources).length === 0 ? null : passwordSourceDigest(input.passwordSources),
    sql: {
      sqlHash: rendered.sqlHash,
      redactedSql: rendered.redactedSql,
      statementCount: rendered.statementCount,
    },
    snapshotRequestedAt: input.snapshotRequestedAt,
  };
  return { computed, plan };
}
