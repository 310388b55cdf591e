// Pure planning for one policy: from the expanded content, the resolved target reference, the password
// source versions and a snapshot to the lifecycle's ComputedPlan; and the reason classes of failures.
import {
  ChangeDigestError,
  changeDigest,
  computePlan,
  connectionRedactions,
  redactValues,
  secretLabel,
  contentDigest,
  passwordSourceDigest,
  renderSql,
  scramSha256Verifier,
  SCRAM_SALT_LENGTH,
  type CatalogSnapshot,
  type Change,
  type DesiredState,
  type ManagedScope,
  type PlanResult,
} from '@rolepolicy/policy';
import type { ResolvedConnectionSpec } from '@rolepolicy/kube';
import type {
  ComputedPlan,
  ConditionReason,
  ErrorClass,
  PlanningOutcome,
  ReconcileError,
} from '@rolepolicy/plan-lifecycle';

/** Everything one planning pass reads (no I/O left). */
export interface PlanningInput {
  readonly namespace: string;
  /** `spec` of the policy (content digest input). */
  readonly spec: unknown;
  readonly desired: DesiredState;
  readonly scope: ManagedScope;
  /** The digest's target reference from `resolveConnection`. */
  readonly target: string;
  readonly connection: ResolvedConnectionSpec;
  readonly passwordSources: Readonly<Record<string, string>>;
  readonly appliedPasswordSourceVersions: Readonly<Record<string, string>>;
  readonly allowSchemaOwnerTransfers: boolean;
  readonly snapshot: CatalogSnapshot;
  /** RFC 3339 time the snapshot was requested (see `ComputedPlan.snapshotRequestedAt`). */
  readonly snapshotRequestedAt: string | null;
}

/**
 * The database a connection addresses, `host:port/dbname` with the host lowercased: the key two
 * policies conflict on (aliases through different Secrets included), never credentials.
 */
export function databaseAddress(connection: ResolvedConnectionSpec): string {
  if ('params' in connection) {
    const { host, port, dbname } = connection.params;
    return `${host.toLowerCase()}:${port}/${dbname}`;
  }
  const url = new URL(connection.url.trim());
  const host = (url.hostname || url.searchParams.get('host') || 'localhost').toLowerCase();
  const port = url.port === '' ? 5432 : Number(url.port);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username);
  return `${host}:${port}/${database}`;
}

/**
 * {@link databaseAddress} as a status or plan may show it: a part read from a Secret appears as its Secret and
 * key, never its value (ADR 0018); a connection URL from a Secret is only that reference.
 */
export function shownAddress(connection: ResolvedConnectionSpec): string {
  const sources = connection.secretSources ?? [];
  const url = sources.find((source) => source.part === 'url');
  if (url !== undefined) return secretLabel(url.secret, url.key);
  return redactValues(databaseAddress(connection), connectionRedactions(connection, sources));
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

/** Computes the plan summary the decision table reads; rendering or digest errors become permanent failures. */
export function planFromSnapshot(input: PlanningInput): PlanningOutcome {
  return planPass(input).outcome;
}

/**
 * {@link planFromSnapshot} with the engine's plan it summarised (null when planning failed), so the pass's
 * review artifact is built from this very result instead of computing the plan a second time.
 */
export function planPass(input: PlanningInput): {
  readonly outcome: PlanningOutcome;
  readonly plan: PlanResult | null;
} {
  const { desired, scope, snapshot } = input;
  const mode = desired.reconciliation_mode;
  try {
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
      managedDatabaseIdentity: `${input.namespace}/${shownAddress(input.connection)}`,
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
    return { outcome: { kind: 'computed', plan: computed }, plan };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const reason = error instanceof ChangeDigestError ? 'PlanDigestFailed' : 'PlanRenderFailed';
    return { outcome: { kind: 'failed', error: { class: 'permanent', reason, message } }, plan: null };
  }
}

/**
 * Codes with their own permanent reason (the rest of the permanent ones: DatabaseInspectionFailed). A server
 * that refuses the login (28000/28P01) or has no such database (3D000) is a failed connection, as the peer
 * operator reports it; the retry is at `interval` or when a referenced Secret changes.
 */
const PERMANENT_REASONS: Readonly<Record<string, ConditionReason>> = {
  '42501': 'InsufficientPrivileges',
  '28000': 'DatabaseConnectionFailed',
  '28P01': 'DatabaseConnectionFailed',
  '3D000': 'DatabaseConnectionFailed',
  '3F000': 'MissingDatabaseObject',
  '42P01': 'MissingDatabaseObject',
  '42883': 'MissingDatabaseObject',
  '42704': 'MissingDatabaseObject',
  // The inspector's own code for a database grant naming a database other than the connected one.
  InvalidDatabaseTarget: 'InvalidDatabaseTarget',
};

/**
 * An inspector failure as the decision table's error: transient ones (unreachable, overloaded,
 * restarting, timeouts) are `DatabaseConnectionFailed`; permanent ones by SQLSTATE. The inspector redacted the
 * message already; with the connection it is redacted again of the Secret-sourced parts (an inspector that
 * predates ADR 0018, or a form it missed, still never reaches a status).
 */
export function inspectFailure(
  error: {
    readonly class: ErrorClass;
    readonly code: string | null;
    readonly message: string;
  },
  connection?: ResolvedConnectionSpec,
): ReconcileError {
  const message =
    connection === undefined
      ? error.message
      : redactValues(error.message, connectionRedactions(connection, connection.secretSources ?? []));
  if (error.class === 'transient') {
    return { class: 'transient', reason: 'DatabaseConnectionFailed', message };
  }
  const reason = (error.code !== null && PERMANENT_REASONS[error.code]) || 'DatabaseInspectionFailed';
  return { class: 'permanent', reason, message };
}
