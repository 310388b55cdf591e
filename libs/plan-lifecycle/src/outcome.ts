// What the planner knows after inspection and planning for one policy event: either a computed plan
// summary (digest, counts, identity, SQL) or a classified error. Built by the wiring from libs/policy results.

import type { ErrorClass } from '@rolepolicy/contracts';
import type { ChangeSummary, ReconciliationMode } from '@rolepolicy/policy';

/** Transient errors retry with exponential backoff; permanent ones wait for the interval or an edit. */
export type { ErrorClass };

/** A classified failure. `reason` becomes the Ready/Degraded condition reason (e.g. DatabaseConnectionFailed). */
export interface ReconcileError {
  readonly class: ErrorClass;
  readonly reason: string;
  /** Free text; always passed through the redactor before it is stored. */
  readonly message: string;
}

/** The target identity as read by the inspection this plan was computed from. */
export interface ObservedIdentity {
  /** `system_identifier` as a decimal string; null when unreadable or not exposed. */
  readonly physical: string | null;
  /** False when reading the physical identity failed (permission or missing function). */
  readonly physicalAvailable: boolean;
  readonly logicalFingerprint: string | null;
}

/** The SQL side of a plan: hashes and the redacted preview (never the executable SQL). */
export interface PlannedSql {
  /** Hex SHA-256 of the full SQL (diagnostic, not approval identity). */
  readonly sqlHash: string;
  /** Preview with passwords as `PASSWORD '[REDACTED]'`. */
  readonly redactedSql: string;
  /** Statements after wildcard expansion; may exceed the change total. */
  readonly statementCount: number;
}

/** A successfully computed plan for the policy's current generation. */
export interface ComputedPlan {
  readonly changeDigest: string;
  readonly changeDigestEncoding: string;
  /** Number of typed changes; zero means converged. */
  readonly changeCount: number;
  readonly summary: ChangeSummary;
  /** Advisory strings for `plan_warnings` (adopt-mode owner transfers, undeclared default_owner, ...). */
  readonly warnings: readonly string[];
  /** Adopt mode, `allow_schema_owner_transfers` false, and the plan transfers a schema owner. */
  readonly ownerTransferBlocked: boolean;
  /** Additive mode dropped `ensure: absent` assertions. */
  readonly additiveIgnoredAbsence: boolean;
  /** Reasons the plan cannot be executed at all (unsatisfiable wildcard, missing function, ...). */
  readonly blockers: readonly string[];
  readonly identity: ObservedIdentity;
  /** `<namespace>/<connection identity key>`; never contains credentials. */
  readonly managedDatabaseIdentity: string;
  readonly reconciliationMode: ReconciliationMode;
  readonly ownedRoles: readonly string[];
  readonly ownedSchemas: readonly string[];
  /** Canonical digest of the policy content (`status.content_digest`). */
  readonly contentDigest: string;
  /** role -> current password source version (`secret:key:resourceVersion`); bound into the digest. */
  readonly passwordSourceVersions: Readonly<Record<string, string>>;
  /** Diagnostic SHA-256 of the source-version map; null when no role is password-managed. */
  readonly passwordSourceDigest: string | null;
  readonly sql: PlannedSql;
  /**
   * RFC 3339 time the inspection behind this plan was requested, or null when unknown. A plan applied at
   * or after it may be missing from the snapshot, so the snapshot cannot justify a new plan.
   */
  readonly snapshotRequestedAt: string | null;
}

/** Result of the inspect + plan step. */
export type PlanningOutcome =
  | { readonly kind: 'computed'; readonly plan: ComputedPlan }
  | { readonly kind: 'failed'; readonly error: ReconcileError };
