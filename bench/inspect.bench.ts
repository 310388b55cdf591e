// `npm run bench -- inspect`: a catalog of 1,000 schemas x 50 relations (mixed relkinds) with grants to
// 200 roles; snapshot time and memory of inspect() for the full-size scope beside the same catalog
// queries run raw through psql (the physical floor). Target ratio <= 1.5 -> bench/results/inspect.json.

import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resourceUsage } from 'node:process';

import { inspect, type PgCatalog } from '@rolepolicy/catalog';
import type { ManagedScope } from '@rolepolicy/policy';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

import {
  BENCH_ADMIN_URL,
  databaseUrl,
  inlineParameters,
  median,
  mixedRelationsLoop,
  round,
  runOn,
  timePsql,
  writeResult,
} from './pg-bench-support.js';

const DATABASE = 'rolepolicy_bench_inspect';
const ROLE_PREFIX = 'rp_bench_i_';
const RUNS = 5;
const TARGET_RATIO = 1.5;

/** Builds the catalog: one schema per transaction (50,000 relations would exhaust the lock table at once). */
function buildSql(schemas: number, relations: number, roles: number): string {
  return `
DO $$
DECLARE s int; k int; schema text; role text;
BEGIN
  FOR k IN 0..${roles - 1} LOOP
    EXECUTE format('CREATE ROLE %I', '${ROLE_PREFIX}' || k);
  END LOOP;
  COMMIT;
  FOR s IN 0..${schemas - 1} LOOP
    schema := 'bench_s' || s;
    role := '${ROLE_PREFIX}' || (s % ${roles});
    EXECUTE format('CREATE SCHEMA %I', schema);
${mixedRelationsLoop(relations)}
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', schema, role);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', schema, role);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', schema, '${ROLE_PREFIX}' || ((s + 1) % ${roles}));
    COMMIT;
  END LOOP;
END $$;`;
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

function fullScope(schemas: number, roles: number): ManagedScope {
  const roleNames = Array.from({ length: roles }, (_, k) => `${ROLE_PREFIX}${k}`).sort();
  const schemaNames = Array.from({ length: schemas }, (_, s) => `bench_s${s}`).sort();
  return {
    roles: roleNames,
    membership_grantors: [],
    schemas: schemaNames,
    owned_schemas: [],
    wildcards: schemaNames.map((schema) => ({
      grantee: `${ROLE_PREFIX}${Number(schema.slice('bench_s'.length)) % roles}`,
      object_type: 'table' as const,
      schema,
      privileges: ['SELECT' as const],
    })),
    public_objects: [],
    default_privilege_scopes: [],
    include_database_privileges: false,
    database_targets: [],
    function_signatures: [],
  };
}

/** Runs the inspect benchmark. `--scale 0.1` builds a tenth of the schemas (quick check); `--keep` keeps it. */
export async function runInspectBench(_script: string, args: readonly string[]): Promise<void> {
  const scaleAt = args.indexOf('--scale');
  const scale = scaleAt >= 0 ? Number(args[scaleAt + 1]) : 1;
  const schemas = Math.max(1, Math.round(1000 * scale));
  const relations = 50;
  const roles = 200;
  await dropAll();
  await runOn(BENCH_ADMIN_URL, `CREATE DATABASE ${DATABASE}`);
  const url = databaseUrl(DATABASE);
  try {
    const buildStart = performance.now();
    await runOn(url, buildSql(schemas, relations, roles));
    await runOn(url, 'ANALYZE');
    const buildMs = performance.now() - buildStart;

    const captured: string[] = [];
    let capture = false;
    const db = new Kysely<PgCatalog>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
      log: (event) => {
        if (capture && event.level === 'query') {
          captured.push(`${inlineParameters(event.query.sql, event.query.parameters)};`);
        }
      },
    });
    const scope = fullScope(schemas, roles);
    const samples: number[] = [];
    let heapMb = 0;
    let snapshotSize = { grants: 0, inventory: 0 };
    for (let run = 0; run <= RUNS; run++) {
      capture = run === 0;
      const heapBefore = process.memoryUsage().heapUsed;
      const start = performance.now();
      const snapshot = await inspect(db, scope, { host: '127.0.0.1', port: 5432, database: DATABASE });
      const ms = performance.now() - start;
      heapMb = Math.max(heapMb, (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024);
      snapshotSize = { grants: snapshot.grants.length, inventory: snapshot.inventory.length };
      // The first run warms the JIT and the server caches; it is not counted.
      if (run > 0) samples.push(ms);
    }
    await db.destroy();

    const script = path.join(tmpdir(), `rolepolicy-inspect-bench-${process.pid}.sql`);
    writeFileSync(
      script,
      ['BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;', ...captured, 'COMMIT;'].join('\n'),
    );
    const psqlMs = timePsql(url, ['-f', script], RUNS);
    const psqlStartMs = timePsql(url, ['-c', 'SELECT 1'], RUNS);
    const floorMs = Math.max(psqlMs - psqlStartMs, 0.1);
    const inspectMs = median(samples);
    const report = {
      benchmark: 'inspect',
      description:
        'inspect() of a full-size scope (200 roles, 1,000 schemas x 50 relations of mixed relkinds, a table wildcard per schema) ' +
        'vs the same catalog queries through psql (minus psql start-up)',
      node: process.version,
      scale,
      schemas,
      relationsPerSchema: relations,
      roles,
      runs: RUNS,
      buildSeconds: round(buildMs / 1000),
      queries: captured.length,
      snapshotGrants: snapshotSize.grants,
      snapshotInventory: snapshotSize.inventory,
      inspectMs: round(inspectMs),
      psqlMs: round(psqlMs),
      psqlStartupMs: round(psqlStartMs),
      physicalFloorMs: round(floorMs),
      ratio: round(inspectMs / floorMs),
      targetRatio: TARGET_RATIO,
      underTarget: inspectMs / floorMs <= TARGET_RATIO,
      heapGrowthMb: round(heapMb),
      peakRssMb: round(resourceUsage().maxRSS / 1024),
    };
    console.table([report]);
    writeResult('inspect', report);
  } finally {
    // `--keep` leaves the catalog in place for profiling the queries by hand.
    if (!args.includes('--keep')) await dropAll();
  }
}
