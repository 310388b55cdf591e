// Runs a rendered plan in ONE transaction under a per-database advisory lock, statement by statement;
// on failure everything rolls back and the error names the redacted statement and its SQLSTATE. A plan with
// role or membership DDL (roles are server-wide) also holds the server's role lock (ADR 0027) until it commits.

import { sql, type Kysely, type Transaction } from 'kysely';

import type { PgCatalog } from './pg-catalog.tables.js';
import { errorCode, redactText, SafeError } from './redaction.js';

/** One statement of a rendered plan: the SQL to run and its preview with secrets replaced. */
export interface ExecutableStatement {
  readonly sql: string;
  readonly redacted: string;
}

/** A statement failed: the transaction was rolled back and nothing of the plan is applied. */
export class ExecutionError extends SafeError {
  override readonly name = 'ExecutionError';
  constructor(
    message: string,
    /** 0-based index of the failing statement. */
    readonly statementIndex: number,
    /** The failing statement, redacted. */
    readonly statement: string,
    readonly sqlState: string | null,
  ) {
    super(message);
  }

  /**
   * True when the statement collided with another session's concurrent write rather than with anything in
   * the plan: a unique violation (23505) in a catalog index (roles and memberships are cluster-wide, and two
   * databases of one server do not share the per-database lock), a serialization failure or deadlock, or a
   * catalog tuple updated concurrently. Nothing was committed: running the whole transaction again, after a
   * fresh look under the lock, is safe.
   */
  get concurrentUpdate(): boolean {
    if (this.sqlState === '23505' || this.sqlState === '40001' || this.sqlState === '40P01') return true;
    return this.sqlState === 'XX000' && /tuple concurrently (updated|deleted)/.test(this.message);
  }
}

/** What `prepare` decides once the lock is held: run these statements, or refuse with a reason. */
export type LockedDecision<T> =
  | {
      readonly run: true;
      readonly statements: readonly ExecutableStatement[];
      readonly result: T;
      /**
       * Runs on the same session after the commit, before the lock is released, so it reads exactly what
       * this transaction left (no other applier came between). Best effort: a failure here is swallowed
       * and the committed outcome stands.
       */
      readonly afterCommit?: (session: Kysely<PgCatalog>) => Promise<void>;
    }
  | { readonly run: false; readonly result: T };

/**
 * The advisory lock key of the connected database: every applier of the same database serialises
 * on it, whichever host name it used to connect.
 */
const LOCK_KEY = sql<bigint>`pg_catalog.hashtextextended('rolepolicy:' || pg_catalog.current_database(), 0)`;

/**
 * The server-wide locks that role and membership DDL of one server is serialised on (ADR 0027), one per role
 * name: two executions that touch the same role (or the same membership, whose two names both count) wait for
 * each other, executions on different roles do not. PostgreSQL scopes advisory locks to the current database,
 * so they are held by a session on a database every execution of the server reaches (the maintenance
 * database); `around` runs `task` while holding the locks of `roles`.
 */
export interface ServerLock {
  around<T>(task: () => Promise<T>, roles: readonly string[]): Promise<T>;
}

/**
 * The names a role statement names (roles, members, grantors; a database named by `IN DATABASE` too, which
 * only makes a lock wider): its quoted identifiers, unescaped, sorted and distinct. Statements render every
 * identifier quoted; string literals (passwords, settings) are not names and are skipped.
 * @example roleNamesOf(['GRANT "r" TO "m";']) // ['m', 'r']
 */
export function roleNamesOf(statements: readonly string[]): string[] {
  const names = new Set<string>();
  for (const text of statements) {
    if (!isRoleStatement(text)) continue;
    for (const match of text.matchAll(QUOTED)) {
      const token = match[0];
      if (token.startsWith('"')) names.add(token.slice(1, -1).replaceAll('""', '"'));
    }
  }
  return [...names].sort();
}

/** Quoted identifiers and string literals left out, so a role named `"x ON y"` reads as a name. */
const QUOTED = /"(?:[^"]|"")*"|'(?:[^']|'')*'/g;

/**
 * Whether a statement writes the server-wide role catalogs (pg_authid, pg_auth_members, pg_db_role_setting
 * for role-wide settings, pg_shdescription): CREATE/ALTER/DROP ROLE, COMMENT ON ROLE, and GRANT/REVOKE of a
 * role (no `ON <object>` clause). Object grants and every other DDL act on the current database only.
 * @example isRoleStatement('GRANT "r" TO "m";') // true; isRoleStatement('GRANT USAGE ON SCHEMA "s" TO "r";') // false
 */
export function isRoleStatement(text: string): boolean {
  const bare = text.replace(QUOTED, '""').trimStart().toUpperCase();
  if (/^(CREATE|ALTER|DROP)\s+(ROLE|USER|GROUP)\b/.test(bare)) return true;
  if (/^COMMENT\s+ON\s+ROLE\b/.test(bare)) return true;
  return /^(GRANT|REVOKE)\b/.test(bare) && !/\bON\b/.test(bare);
}

/**
 * Holds the per-database advisory lock on one pinned session, lets `prepare` re-inspect and re-plan on that
 * same session (its reads open their own snapshot, taken after the lock was granted), then runs the
 * statements it returns in one transaction and commits. One session per execution: a second one would pay
 * a backend start and cold catalog caches again (docs/performance.md, "A fleet").
 *
 * The lock is session-level, so it is released explicitly, and in any case with the session: callers close
 * their pool when the call returns (a dead connection has already released it).
 *
 * With `serverLock`, a transaction holding role or membership DDL runs inside `serverLock.around`: taken
 * after the plan was decided (so executions without role DDL, and every re-inspection, stay parallel) and
 * released after the commit, so the next execution's statements see the committed roles and edges.
 * @example `await executeUnderLock(db, async (session) => ({ run: true, statements, result: undefined }))`
 */
export async function executeUnderLock<T>(
  db: Kysely<PgCatalog>,
  prepare: (session: Kysely<PgCatalog>) => Promise<LockedDecision<T>>,
  serverLock?: ServerLock,
  phases?: ExecutionPhases,
): Promise<T> {
  return db.connection().execute(async (session) => {
    const lockWait = phases?.begin('lock wait');
    await sql`SELECT pg_catalog.pg_advisory_lock(${LOCK_KEY})`.execute(session).catch(ended(lockWait));
    lockWait?.();
    try {
      const decision = await prepare(session);
      if (decision.run) {
        const roles = serverLock === undefined ? [] : roleNamesOf(decision.statements.map((s) => s.sql));
        const roleWait =
          serverLock !== undefined && roles.length > 0 ? phases?.begin('role lock wait') : undefined;
        const commit = () => {
          roleWait?.();
          return commitStatements(session, decision.statements, phases);
        };
        await (serverLock !== undefined && roles.length > 0 ? serverLock.around(commit, roles) : commit());
        await decision.afterCommit?.(session).catch(() => undefined);
      }
      return decision.result;
    } finally {
      // A failed unlock means a broken session, whose end released the lock; the outcome above stands.
      await sql`SELECT pg_catalog.pg_advisory_unlock(${LOCK_KEY})`.execute(session).catch(() => undefined);
    }
  });
}

/**
 * Phases of {@link executeUnderLock} a caller may time (the executor's trace spans): `begin` is called when
 * a phase starts and returns what ends it (with the error when it failed). Never given statement text.
 */
export type ExecutionPhases = {
  begin(phase: 'lock wait' | 'role lock wait' | 'statements' | 'commit', statementCount?: number): PhaseEnd;
};

/** Ends a phase; `error` when it failed. */
export type PhaseEnd = (error?: unknown) => void;

/** A catch handler that ends the phase with the error and rethrows it. */
function ended(end: PhaseEnd | undefined): (error: unknown) => never {
  return (error) => {
    end?.(error);
    throw error;
  };
}

/** The statements in one transaction, then its commit, each a phase. */
async function commitStatements(
  session: Kysely<PgCatalog>,
  statements: readonly ExecutableStatement[],
  phases: ExecutionPhases | undefined,
): Promise<void> {
  let commit: PhaseEnd | undefined;
  await session
    .transaction()
    .execute(async (trx) => {
      const running = phases?.begin('statements', statements.length);
      await runStatements(trx, statements).catch(ended(running));
      running?.();
      commit = phases?.begin('commit');
    })
    .catch(ended(commit));
  commit?.();
}

/** Runs statements in one transaction under the advisory lock. */
export async function executeStatements(
  db: Kysely<PgCatalog>,
  statements: readonly ExecutableStatement[],
): Promise<void> {
  await executeUnderLock(db, async () => ({ run: true, statements, result: undefined }));
}

/** Statement text shown in an error message: a grouped statement can list 1,000 objects. */
const SHOWN_STATEMENT_CHARS = 1000;

/**
 * `text` cut to at most `max` UTF-16 units (never inside a surrogate pair), saying how much was left out.
 * @example clipStatement('GRANT ...', 1000)
 */
export function clipStatement(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}... [${text.length - end} more characters]`;
}

async function runStatements(
  trx: Transaction<PgCatalog>,
  statements: readonly ExecutableStatement[],
): Promise<void> {
  for (const [index, statement] of statements.entries()) {
    try {
      await sql.raw(statement.sql).execute(trx);
    } catch (error) {
      const state = errorCode(error);
      // A server message may echo parts of the statement; for a statement with secrets, withhold it.
      const secret = statement.sql !== statement.redacted;
      const detail = secret
        ? 'message withheld: the statement carries a secret'
        : redactText(error instanceof Error ? error.message : String(error), []);
      throw new ExecutionError(
        `statement ${index + 1} of ${statements.length} failed (SQLSTATE ${state ?? 'unknown'}): ${detail}; ` +
          `statement: ${clipStatement(statement.redacted.replace(/;\s*$/, ''), SHOWN_STATEMENT_CHARS)}; ` +
          'the transaction was rolled back',
        index,
        statement.redacted,
        state,
      );
    }
  }
}
