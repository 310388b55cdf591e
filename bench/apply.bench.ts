// `npm run bench -- apply`: executing a 5,000-statement plan (one transaction, advisory lock, statement
// by statement) vs `psql -1 -f` of the same SQL. Target ratio <= 1.2 -> bench/results/apply.json.
// Then the spec-bounds plan (`plan` in the result, apply-plan.bench.ts): the executor running the grouped
// statements vs `psql -1 -f` of the per-object SQL. Target ratio <= 0.5.
// Options: `--fraction F` (plan size as a fraction of the spec's bounds, default 1), `--runs N` (default 3),
// `--skip-plan` (only the 5,000-statement part), `--plan-only` (only the plan part, merged into the
// existing result file).

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { executeStatements, openConnection } from '@rolepolicy/catalog';

import { runPlanApply, type PlanApplyReport } from './apply-plan.bench.js';

import {
  BENCH_ADMIN_URL,
  databaseUrl,
  median,
  round,
  runOn,
  timePsql,
  writeResult,
} from './pg-bench-support.js';

const DATABASE = 'rolepolicy_bench_apply';
const ROLE_PREFIX = 'rp_bench_a_';
const STATEMENTS = 5000;
const TABLES = 50;
const ROLES = 100;
const RUNS = 5;
const TARGET_RATIO = 1.2;

async function dropAll(): Promise<void> {
  await runOn(BENCH_ADMIN_URL, `DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await runOn(
    BENCH_ADMIN_URL,
    `DO $$ DECLARE r text; BEGIN
       FOR r IN SELECT rolname FROM pg_roles WHERE starts_with(rolname, '${ROLE_PREFIX}') LOOP
         EXECUTE format('DROP ROLE %I', r);
       END LOOP; END $$;`,
  );
}

function option(args: readonly string[], flag: string, fallback: number): number {
  const at = args.indexOf(flag);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} needs a positive number`);
  return value;
}

/** Runs the apply benchmark. */
export async function runApplyBench(_script: string, args: readonly string[] = []): Promise<void> {
  const fraction = option(args, '--fraction', 1);
  const planRuns = option(args, '--runs', 3);
  if (args.includes('--plan-only')) {
    const plan = await runPlanApply(fraction, Math.round(planRuns));
    console.table([plan]);
    const file = new URL('../../bench/results/apply.json', import.meta.url);
    const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as object) : {};
    writeResult('apply', { ...previous, plan });
    return;
  }
  await dropAll();
  await runOn(BENCH_ADMIN_URL, `CREATE DATABASE ${DATABASE}`);
  const url = databaseUrl(DATABASE);
  try {
    await runOn(
      url,
      `DO $$ BEGIN
         FOR k IN 0..${ROLES - 1} LOOP EXECUTE format('CREATE ROLE %I', '${ROLE_PREFIX}' || k); END LOOP;
         FOR k IN 0..${TABLES - 1} LOOP EXECUTE format('CREATE TABLE %I (id int)', 't' || k); END LOOP;
       END $$;`,
    );
    // Idempotent statements (re-granting is a no-op), so every run does the same work.
    const statements = Array.from({ length: STATEMENTS }, (_, i) => {
      const text = `GRANT SELECT ON TABLE "public"."t${i % TABLES}" TO "${ROLE_PREFIX}${Math.floor(i / TABLES) % ROLES}";`;
      return { sql: text, redacted: text };
    });
    const connection = openConnection({ url, maxConnections: 1 });
    const samples: number[] = [];
    for (let run = 0; run <= RUNS; run++) {
      const start = performance.now();
      await executeStatements(connection.db, statements);
      if (run > 0) samples.push(performance.now() - start);
    }
    await connection.close();

    const script = path.join(tmpdir(), `rolepolicy-apply-bench-${process.pid}.sql`);
    writeFileSync(script, statements.map((statement) => statement.sql).join('\n'));
    const psqlMs = timePsql(url, ['-1', '-f', script], RUNS);
    const psqlStartMs = timePsql(url, ['-c', 'SELECT 1'], RUNS);
    const floorMs = Math.max(psqlMs - psqlStartMs, 0.1);
    const executeMs = median(samples);
    let plan: PlanApplyReport | undefined;
    if (!args.includes('--skip-plan')) plan = await runPlanApply(fraction, Math.round(planRuns));
    const report = {
      benchmark: 'apply',
      description: `executeStatements() of ${STATEMENTS} statements (one transaction, advisory lock) vs psql -1 -f of the same SQL (minus psql start-up)`,
      node: process.version,
      statements: STATEMENTS,
      runs: RUNS,
      executeMs: round(executeMs),
      psqlMs: round(psqlMs),
      psqlStartupMs: round(psqlStartMs),
      physicalFloorMs: round(floorMs),
      ratio: round(executeMs / floorMs),
      targetRatio: TARGET_RATIO,
      underTarget: executeMs / floorMs <= TARGET_RATIO,
      ...(plan !== undefined ? { plan } : {}),
    };
    const { plan: _plan, ...flat } = report as typeof report & { plan?: unknown };
    console.table([flat]);
    if (plan !== undefined) console.table([plan]);
    writeResult('apply', report);
  } finally {
    await dropAll();
  }
}
