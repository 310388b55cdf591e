// PostgreSQL's work per policy by statement, for the fleet bench's product and read-then-apply floor stages:
// `pg_stat_statements` (calls, execution and planning time per normalised statement) and `pg_stat_database`
// (sessions, transactions) of the stage's databases and of the maintenance database the role lock uses. Only
// where the bench server has the extension (`shared_preload_libraries = 'pg_stat_statements'` and
// `CREATE EXTENSION pg_stat_statements` in the admin URL's database; `pg_stat_statements.track_planning = on`
// for planning times); a server shared with other work mixes theirs into the maintenance database's figures.
import pg from 'pg';

import { BENCH_ADMIN_URL } from './pg-bench-support.js';

/** One normalised statement's work per policy. */
export interface StatementWork {
  readonly query: string;
  readonly calls: number;
  readonly execMs: number;
  readonly planMs: number;
}

/** A stage's PostgreSQL work per policy, by database group. */
export interface StageStatements {
  /** Statements in the stage's databases: calls, execution and planning ms per policy. */
  readonly databases: { readonly calls: number; readonly execMs: number; readonly planMs: number };
  /** The same in the maintenance database (`postgres`: the role lock's sessions; the bench's own reads too). */
  readonly maintenance: {
    readonly calls: number;
    readonly execMs: number;
    readonly planMs: number;
    readonly sessions: number;
  };
  /** The statements with the most execution + planning time, per policy, both groups. */
  readonly top: readonly StatementWork[];
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function admin<T>(body: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: BENCH_ADMIN_URL });
  await c.connect();
  try {
    return await body(c);
  } finally {
    await c.end();
  }
}

/** Whether the bench server records statements (the extension loaded and created in the admin database). */
export async function statementsAvailable(): Promise<boolean> {
  return admin(async (c) => {
    try {
      await c.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
      return true;
    } catch {
      return false;
    }
  }).catch(() => false);
}

/** Starts a stage: forgets what the server recorded so far, and returns the maintenance database's sessions. */
export async function resetStatements(maintenance = 'postgres'): Promise<number> {
  return admin(async (c) => {
    await c.query('SELECT pg_stat_statements_reset()');
    const { rows } = await c.query<{ sessions: string }>(
      'SELECT sessions FROM pg_stat_database WHERE datname = $1',
      [maintenance],
    );
    return Number(rows[0]?.sessions ?? 0);
  });
}

/**
 * What the stage's databases (`names`) and the maintenance database ran since {@link resetStatements}, per
 * policy; read before the databases are dropped.
 */
export async function stageStatements(
  names: readonly string[],
  policies: number,
  maintenanceSessionsBefore: number,
  maintenance = 'postgres',
): Promise<StageStatements> {
  return admin(async (c) => {
    const { rows } = await c.query<{
      grp: string;
      query: string;
      calls: string;
      exec: number;
      plan: number;
    }>(
      `SELECT CASE WHEN d.datname = $2 THEN 'maintenance' ELSE 'databases' END AS grp,
              regexp_replace(s.query, '\\s+', ' ', 'g') AS query,
              sum(s.calls) AS calls, sum(s.total_exec_time) AS exec, sum(s.total_plan_time) AS plan
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = ANY($1) OR d.datname = $2
        GROUP BY 1, 2`,
      [names, maintenance],
    );
    const { rows: sessions } = await c.query<{ sessions: string }>(
      'SELECT sessions FROM pg_stat_database WHERE datname = $1',
      [maintenance],
    );
    const group = (name: string) => {
      const of = rows.filter((row) => row.grp === name);
      const sum = (pick: (row: (typeof rows)[number]) => number) =>
        round2(of.reduce((total, row) => total + pick(row), 0) / policies);
      return {
        calls: sum((row) => Number(row.calls)),
        execMs: sum((row) => row.exec),
        planMs: sum((row) => row.plan),
      };
    };
    const top = rows
      .map((row) => ({
        query: `${row.grp === 'maintenance' ? '[postgres] ' : ''}${row.query.slice(0, 140)}`,
        calls: round2(Number(row.calls) / policies),
        execMs: round2(row.exec / policies),
        planMs: round2(row.plan / policies),
      }))
      .sort((a, b) => b.execMs + b.planMs - (a.execMs + a.planMs))
      .slice(0, 30);
    return {
      databases: group('databases'),
      maintenance: {
        ...group('maintenance'),
        sessions: round2((Number(sessions[0]?.sessions ?? 0) - maintenanceSessionsBefore) / policies),
      },
      top,
    };
  });
}
