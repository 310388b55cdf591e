// Pure planning for one policy: from the expanded content, the resolved target reference, the password
// source versions and a snapshot to the lifecycle's ComputedPlan (built by plan-lifecycle's
// computePlanSummary); and the reason classes of failures.
import {
  ChangeDigestError,
  connectionRedactions,
  redactValues,
  secretLabel,
  type PlanResult,
} from '@rolepolicy/policy';
import type { ResolvedConnectionSpec } from '@rolepolicy/kube';
import {
  computePlanSummary,
  type ConditionReason,
  type PlanComputationInput,
  type ErrorClass,
  type PlanningOutcome,
  type ReconcileError,
} from '@rolepolicy/plan-lifecycle';

/** Everything one planning pass reads (no I/O left). */
export interface PlanningInput extends Omit<PlanComputationInput, 'managedDatabaseIdentity'> {
  readonly namespace: string;
  readonly connection: ResolvedConnectionSpec;
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
  try {
    const { computed, plan } = computePlanSummary({
      ...input,
      managedDatabaseIdentity: `${input.namespace}/${shownAddress(input.connection)}`,
    });
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
