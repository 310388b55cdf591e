// `npm run bench -- apply`: executing a 5,000-statement plan (one transaction, advisory lock, statement
// by statement) vs `psql -1 -f` of the same SQL. Target ratio <= 1.2 -> bench/results/apply.json.

import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { executeStatements, openConnection } from '@rolepolicy/catalog';

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

/** Runs the apply benchmark. */
export async function runApplyBench(): Promise<void> {
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
    };
    console.table([report]);
    writeResult('apply', report);
  } finally {
    await dropAll();
  }
}
