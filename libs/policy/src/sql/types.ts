// Input and output shapes of the SQL renderer (agreed in engine-interfaces.md).
// Rendering reads only changes and this context: no catalog access, no clock, no randomness.

import type { InventoryObject } from '../model/snapshot.js';

/** What rendering needs beyond the changes. */
export interface SqlContext {
  /** `server_version_num`: 160000 and above selects PG16 membership syntax. */
  readonly serverVersionNum: number;
  /** Plan-time wildcard inventory (the snapshot's), used to expand relation and type wildcards per object. */
  readonly inventory: readonly InventoryObject[];
  /** role -> SCRAM-SHA-256 verifier for every `set_password` change. Never cleartext. */
  readonly passwords: Readonly<Record<string, string>>;
  /**
   * Role to return to after a `SET ROLE` used to revoke a grant made by another grantor.
   * Omitted: `RESET ROLE` (back to the session's role).
   */
  readonly executorRole?: string | null;
}

/** How `renderSql` shapes the statements. */
export interface RenderOptions {
  /**
   * `grouped` (default, what executes): compatible GRANT/REVOKE statements share one statement
   * (several objects of one kind and schema, several grantees). `per_object`: one statement per object
   * and grantee, as the changes expand (tests, the apply benchmark's floor).
   */
  readonly statements?: 'grouped' | 'per_object';
}

/** One statement, in execution order. */
export interface Statement {
  /** Executable SQL, ending in `;`. May contain a password verifier. */
  readonly sql: string;
  /** The same statement safe to show, log and store (verifier replaced by `[REDACTED]`). */
  readonly redacted: string;
  /** Index of the (first) change that produced it: `changeIndices[0]`. */
  readonly changeIndex: number;
  /** Every change whose effects this statement carries, ascending (several when grouped). */
  readonly changeIndices: readonly number[];
}

/** The rendered plan. */
export interface RenderedSql {
  readonly statements: readonly Statement[];
  /** Every `sql` joined with `\n`. Secret: contains verifiers. */
  readonly sql: string;
  /** Every `redacted` joined with `\n`: the preview. */
  readonly redactedSql: string;
  /** Statements that run: after wildcard expansion and grouping (may exceed the change count). */
  readonly statementCount: number;
  /** Lowercase hex SHA-256 of `sql` (diagnostic, not approval identity). */
  readonly sqlHash: string;
  /** Lowercase hex SHA-256 of `redactedSql` (storage integrity of the preview). */
  readonly redactedSqlHash: string;
}
