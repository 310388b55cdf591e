// Shared helpers of the catalog benchmarks: bench databases on the local server, psql timing (the
// physical floor), inlining bound parameters so psql runs the exact queries, medians.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import pg from 'pg';

/** Admin URL of the bench server (trust-auth local server by default). */
export const BENCH_ADMIN_URL =
  process.env['RP_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** URL of a database on the bench server. */
export function databaseUrl(database: string): string {
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs SQL on a URL (autocommit, so DO blocks may COMMIT). */
export async function runOn(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Dead rows in the shared catalogs before and after {@link vacuumSharedCatalogs}, and how long it took. */
export type SharedCatalogVacuum = {
  readonly deadBefore: number;
  readonly deadAfter: number;
  readonly ms: number;
};

const SHARED_DEAD_ROWS = `SELECT coalesce(sum(s.n_dead_tup), 0)::bigint AS dead
  FROM pg_catalog.pg_stat_all_tables s JOIN pg_catalog.pg_class c ON c.oid = s.relid
 WHERE c.relisshared AND c.relkind = 'r'`;

/**
 * VACUUMs (and ANALYZEs) the shared catalogs of the server at `adminUrl` (superuser). A day of tests and benches
 * creates and drops thousands of roles and databases; their dead rows in pg_authid, pg_auth_members, pg_shdepend,
 * pg_database... slow every catalog read and role DDL of the next measurement, so a bench run on a server
 * that autovacuum has not caught up with measures the server's history. `.ci/pg-hygiene.sql` does the same for CI.
 */
export async function vacuumSharedCatalogs(adminUrl: string = BENCH_ADMIN_URL): Promise<SharedCatalogVacuum> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const start = performance.now();
    const dead = async (): Promise<number> =>
      Number((await client.query<{ dead: string }>(SHARED_DEAD_ROWS)).rows[0]?.dead ?? 0);
    const deadBefore = await dead();
    const { rows } = await client.query<{ name: string }>(
      `SELECT oid::regclass::text AS name FROM pg_catalog.pg_class
        WHERE relisshared AND relkind = 'r' ORDER BY relname`,
    );
    await client.query(`VACUUM (ANALYZE) ${rows.map((r) => r.name).join(', ')}`);
    return { deadBefore, deadAfter: await dead(), ms: Math.round(performance.now() - start) };
  } finally {
    await client.end();
  }
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** One decimal. */
export const round = (n: number): number => Math.round(n * 10) / 10;

/** Wall time of `psql` running `args` (ms), median of `runs`. */
export function timePsql(url: string, args: readonly string[], runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-o', '/dev/null', '-d', url, ...args], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    samples.push(performance.now() - start);
  }
  return median(samples);
}

function pgArrayElement(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return `"${String(value).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

function literal(value: unknown): string {
  if (Array.isArray(value)) return literal(`{${value.map(pgArrayElement).join(',')}}`);
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** The query with `$n` replaced by SQL literals, so psql runs exactly what the driver ran. */
export function inlineParameters(text: string, parameters: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_match, index: string) => literal(parameters[Number(index) - 1]));
}

/** Writes bench/results/<name>.json. */
export function writeResult(name: string, report: unknown): void {
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}${name}.json`, `${JSON.stringify(report, null, 2)}\n`);
}

/**
 * PL/pgSQL loop body creating `count` relations in the variable `schema` (declare `k int`): two tables,
 * a view, a materialized view and a sequence out of every five, the mixed relkinds a catalog read must handle.
 */
export function mixedRelationsLoop(count: number): string {
  return `    FOR k IN 0..${count - 1} LOOP
      CASE k % 5
        WHEN 0, 1 THEN EXECUTE format('CREATE TABLE %I.%I (id int)', schema, 't' || k);
        WHEN 2 THEN EXECUTE format('CREATE VIEW %I.%I AS SELECT 1 AS x', schema, 'v' || k);
        WHEN 3 THEN EXECUTE format('CREATE MATERIALIZED VIEW %I.%I AS SELECT 1 AS x', schema, 'm' || k);
        ELSE EXECUTE format('CREATE SEQUENCE %I.%I', schema, 'q' || k);
      END CASE;
    END LOOP;`;
}
