// Part of `npm run bench -- apply`: the plan of the policy benchmark's fixture at `fraction` of the spec's
// bounds (1,024 schemas x 50 tables at full size: ~56,000 per-object statements), planned from a real
// inspection of a database built for it, then applied three ways in the same run:
//   - the executor (`executeStatements`: one transaction, advisory lock) running the grouped statements;
//   - `psql -1 -f` of the per-object SQL (the floor: what one statement per object costs at best);
//   - `psql -1 -f` of the grouped SQL (what is left: the server's own per-object work).
// Every run ends in ROLLBACK (the same appended statement on every side), so each run does the same work
// on the same catalog; only the final commit is not measured. Target: executor / floor <= 0.5.

import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { executeStatements, inspect, openConnection } from '@rolepolicy/catalog';
import { computePlan, deriveManagedScope, expandPolicy, renderSql } from '@rolepolicy/policy';
import pg from 'pg';

import { policyAt } from './policy-fixture.js';
import { BENCH_ADMIN_URL, databaseUrl, median, round, runOn, timePsql } from './pg-bench-support.js';

const DATABASE = 'rolepolicy_bench_apply_plan';
const ROLE_PREFIX = 'rp_bench_ap_';
const TABLES_PER_SCHEMA = 50;
const TARGET_RATIO = 0.5;
const ROLLBACK = { sql: 'ROLLBACK;', redacted: 'ROLLBACK;' };

/** What the plan part of bench/results/apply.json holds. */
export interface PlanApplyReport {
  readonly description: string;
  readonly fraction: number;
  readonly runs: number;
  readonly changes: number;
  readonly perObjectStatements: number;
  readonly groupedStatements: number;
  readonly setupMs: number;
  readonly executeGroupedMs: number;
  readonly executePerObjectMs: number;
  readonly psqlPerObjectMs: number;
  readonly psqlGroupedMs: number;
  readonly psqlStartupMs: number;
  readonly floorMs: number;
  readonly ratio: number;
  readonly perObjectRatio: number;
  readonly targetRatio: number;
  readonly underTarget: boolean;
}

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

/**
 * The live side of the fixture: the owner, half the roles (with drift: other LOGIN flags, a stray
 * SELECT, DELETE grant each) and every schema of the policy with its tables, owned by the owner.
 * One schema per transaction: tens of thousands of tables at once would exhaust the lock table.
 */
async function build(url: string, roles: number, schemas: number): Promise<void> {
  const owner = `${ROLE_PREFIX}app_owner`;
  const live = Math.floor((roles - 1) / 2);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE ROLE "${owner}"`);
    await client.query(`DO $$ BEGIN
      FOR i IN 0..${live - 1} LOOP
        EXECUTE format('CREATE ROLE %I %s', '${ROLE_PREFIX}r' || i, CASE WHEN i % 3 = 0 THEN 'LOGIN' ELSE 'NOLOGIN' END);
      END LOOP; END $$;`);
    await client.query(`GRANT CREATE ON DATABASE ${DATABASE} TO "${owner}"`);
    await client.query(`SET ROLE "${owner}"`);
    await client.query(`DO $$ BEGIN
      FOR s IN 0..${schemas - 1} LOOP
        EXECUTE format('CREATE SCHEMA %I', 's' || s);
        FOR t IN 0..${TABLES_PER_SCHEMA - 1} LOOP
          EXECUTE format('CREATE TABLE %I.%I (id int)', 's' || s, 't' || t);
        END LOOP;
        COMMIT;
      END LOOP; END $$;`);
    await client.query('RESET ROLE');
    await client.query(`DO $$ BEGIN
      FOR i IN 0..${live - 1} LOOP
        EXECUTE format('GRANT SELECT, DELETE ON TABLE %I.%I TO %I',
          's' || (i % ${schemas}), 't' || (i % ${TABLES_PER_SCHEMA}), '${ROLE_PREFIX}r' || i);
      END LOOP; END $$;`);
  } finally {
    await client.end();
  }
}

/** Plans the fixture policy against the live database, as the executor does under its lock. */
async function plan(url: string, fraction: number) {
  const expanded = expandPolicy(policyAt(fraction, ROLE_PREFIX), { policyName: 'bench' });
  if (!expanded.ok)
    throw new Error(`bench policy is invalid: ${JSON.stringify(expanded.errors.slice(0, 3))}`);
  const connection = openConnection({ url });
  try {
    const snapshot = await inspect(connection.db, deriveManagedScope(expanded.desired), connection.target);
    const result = computePlan({
      desired: expanded.desired,
      snapshot,
      mode: 'authoritative',
      passwordSources: {},
      appliedPasswordSourceVersions: {},
      allowSchemaOwnerTransfers: false,
    });
    if (result.blockers.length > 0) throw new Error(`bench plan is blocked: ${result.blockers[0]}`);
    const context = {
      serverVersionNum: snapshot.server_version_num,
      inventory: snapshot.inventory,
      passwords: {},
      executorRole: snapshot.executor.role,
    };
    return {
      changes: result.changes.length,
      grouped: renderSql(result.changes, context),
      perObject: renderSql(result.changes, context, { statements: 'per_object' }),
    };
  } finally {
    await connection.close();
  }
}

/** Runs the plan part at `fraction` of the spec's bounds, `runs` timed runs per side (after one warm-up). */
export async function runPlanApply(fraction: number, runs: number): Promise<PlanApplyReport> {
  const roles = Math.max(2, Math.round(1024 * fraction));
  const schemas = Math.max(2, Math.round(1024 * fraction));
  await dropAll();
  await runOn(BENCH_ADMIN_URL, `CREATE DATABASE ${DATABASE}`);
  const url = databaseUrl(DATABASE);
  try {
    const setupStart = performance.now();
    await build(url, roles, schemas);
    const setupMs = performance.now() - setupStart;
    const { changes, grouped, perObject } = await plan(url, fraction);
    const perObjectFile = path.join(tmpdir(), `rolepolicy-apply-plan-${process.pid}-per-object.sql`);
    const groupedFile = path.join(tmpdir(), `rolepolicy-apply-plan-${process.pid}-grouped.sql`);
    writeFileSync(perObjectFile, `${perObject.sql}\n${ROLLBACK.sql}\n`);
    writeFileSync(groupedFile, `${grouped.sql}\n${ROLLBACK.sql}\n`);

    // The appended ROLLBACK makes the COMMIT that ends `psql -1` and the executor's transaction warn.
    process.env['PGOPTIONS'] = '-c client_min_messages=error';
    const connection = openConnection({ url, maxConnections: 1 });
    const execute = async (statements: typeof grouped.statements): Promise<number> => {
      const start = performance.now();
      await executeStatements(connection.db, [...statements, ROLLBACK]);
      return performance.now() - start;
    };
    const samples = {
      grouped: [] as number[],
      perObject: [] as number[],
      psql: [] as number[],
      psqlGrouped: [] as number[],
    };
    try {
      await execute(grouped.statements); // warm-up: catalog pages into shared buffers
      for (let run = 0; run < runs; run++) {
        samples.psql.push(timePsql(url, ['-1', '-f', perObjectFile], 1));
        samples.grouped.push(await execute(grouped.statements));
        samples.psqlGrouped.push(timePsql(url, ['-1', '-f', groupedFile], 1));
        samples.perObject.push(await execute(perObject.statements));
      }
    } finally {
      await connection.close();
    }
    const psqlStartupMs = timePsql(url, ['-c', 'SELECT 1'], 5);
    const psqlPerObjectMs = median(samples.psql);
    const floorMs = Math.max(psqlPerObjectMs - psqlStartupMs, 0.1);
    const executeGroupedMs = median(samples.grouped);
    const executePerObjectMs = median(samples.perObject);
    return {
      description:
        `the policy fixture at ${fraction} of the spec's bounds planned against a live database ` +
        `(${schemas} schemas x ${TABLES_PER_SCHEMA} tables): executeStatements() of the grouped statements vs ` +
        `psql -1 -f of the per-object SQL (minus psql start-up); every run rolled back`,
      fraction,
      runs,
      changes,
      perObjectStatements: perObject.statementCount,
      groupedStatements: grouped.statementCount,
      setupMs: round(setupMs),
      executeGroupedMs: round(executeGroupedMs),
      executePerObjectMs: round(executePerObjectMs),
      psqlPerObjectMs: round(psqlPerObjectMs),
      psqlGroupedMs: round(median(samples.psqlGrouped)),
      psqlStartupMs: round(psqlStartupMs),
      floorMs: round(floorMs),
      ratio: Math.round((executeGroupedMs / floorMs) * 100) / 100,
      perObjectRatio: Math.round((executePerObjectMs / floorMs) * 100) / 100,
      targetRatio: TARGET_RATIO,
      underTarget: executeGroupedMs / floorMs <= TARGET_RATIO,
    };
  } finally {
    delete process.env['PGOPTIONS'];
    await dropAll();
  }
}
