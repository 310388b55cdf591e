// `npm run bench -- generate`: `rolepolicy generate` on the 1,000-schema catalog of the inspect bench
// (1,000 schemas x 50 relations of mixed relkinds, 200 roles, two table grants per schema): the catalog
// read (readForGenerate, one transaction), generation, YAML and the profile suggestion, beside the same
// catalog queries run raw through psql (the floor) -> bench/results/generate.json. The machine is shared:
// the report carries the load average around the run.

import { writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { resourceUsage } from 'node:process';

import { readForGenerate, type PgCatalog } from '@rolepolicy/catalog';
import { generatePolicy, renderManifest, suggestProfiles } from '@rolepolicy/policy';
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

const DATABASE = 'rolepolicy_bench_generate';
const ROLE_PREFIX = 'rp_bench_g_';
const RUNS = 5;

/** The inspect bench's catalog, with this bench's role prefix (one schema per transaction). */
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

/** Runs the generate benchmark. `--scale 0.1` builds a tenth of the schemas; `--keep` keeps the catalog. */
export async function runGenerateBench(_script: string, args: readonly string[]): Promise<void> {
  const scaleAt = args.indexOf('--scale');
  const scale = scaleAt >= 0 ? Number(args[scaleAt + 1]) : 1;
  const schemas = Math.max(1, Math.round(1000 * scale));
  const relations = 50;
  const roles = 200;
  const loadBefore = loadavg();
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
    const target = { host: '127.0.0.1', port: 5432, database: DATABASE };
    const selection = { roles: [`${ROLE_PREFIX}*`], exclude: [] };
    const reads: number[] = [];
    const totals: number[] = [];
    const generations: number[] = [];
    const renders: number[] = [];
    const suggestions: number[] = [];
    let sizes = { grants: 0, yamlKb: 0, collapsedGrants: 0 };
    for (let run = 0; run <= RUNS; run++) {
      capture = run === 0;
      const start = performance.now();
      const source = await readForGenerate(db, selection, target);
      const read = performance.now();
      const generated = generatePolicy(source, { mode: 'authoritative' });
      const made = performance.now();
      const yaml = renderManifest(generated.content, generated.notes, {
        name: 'bench',
        namespace: null,
        connectionSecret: 'bench-db',
        database: DATABASE,
      });
      const rendered = performance.now();
      suggestProfiles(generated);
      const suggested = performance.now();
      sizes = {
        grants: generated.content.grants?.length ?? 0,
        yamlKb: Math.round(yaml.length / 1024),
        collapsedGrants: (generated.content.grants ?? []).filter((g) => g.object.name === '*').length,
      };
      // The first run warms the JIT and the server caches; it is not counted.
      if (run === 0) continue;
      reads.push(read - start);
      generations.push(made - read);
      renders.push(rendered - made);
      suggestions.push(suggested - rendered);
      totals.push(rendered - start);
    }
    await db.destroy();

    const script = path.join(tmpdir(), `rolepolicy-generate-bench-${process.pid}.sql`);
    // Kysely logs its own `start transaction ... repeatable read read only` and `commit`: the script
    // runs in the same one transaction.
    writeFileSync(script, captured.join('\n'));
    const psqlMs = timePsql(url, ['-f', script], RUNS);
    const psqlStartMs = timePsql(url, ['-c', 'SELECT 1'], RUNS);
    const floorMs = Math.max(psqlMs - psqlStartMs, 0.1);
    const generateMs = median(totals);
    const report = {
      benchmark: 'generate',
      description:
        'generate (readForGenerate + generatePolicy + renderManifest) over 200 roles, 1,000 schemas x 50 relations ' +
        'of mixed relkinds (the inspect catalog), vs the same catalog queries through psql (minus psql start-up); ' +
        'suggestProfiles timed separately',
      node: process.version,
      scale,
      schemas,
      relationsPerSchema: relations,
      roles,
      runs: RUNS,
      buildSeconds: round(buildMs / 1000),
      queries: captured.length,
      generatedGrants: sizes.grants,
      collapsedGrants: sizes.collapsedGrants,
      yamlKb: sizes.yamlKb,
      readMs: round(median(reads)),
      generatePolicyMs: round(median(generations)),
      renderYamlMs: round(median(renders)),
      suggestProfilesMs: round(median(suggestions)),
      generateMs: round(generateMs),
      psqlMs: round(psqlMs),
      psqlStartupMs: round(psqlStartMs),
      physicalFloorMs: round(floorMs),
      ratio: round(generateMs / floorMs),
      readRatio: round(median(reads) / floorMs),
      peakRssMb: round(resourceUsage().maxRSS / 1024),
      loadAverageBefore: loadBefore.map(round),
      loadAverageAfter: loadavg().map(round),
    };
    console.table([report]);
    writeResult('generate', report);
  } finally {
    if (!args.includes('--keep')) await dropAll();
  }
}
