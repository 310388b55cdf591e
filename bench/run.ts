// Benchmark entry point: `npm run bench -- <name>` builds, then runs dist/bench/run.js with <name> first.
// Each benchmark registers one line below; benchmarks write their results under bench/results/.

import { fileURLToPath } from 'node:url';

import { BENCH_ADMIN_URL, vacuumSharedCatalogs } from './pg-bench-support.js';

type Bench = (script: string, args: readonly string[]) => void | Promise<void>;

const BENCHMARKS: Readonly<Record<string, () => Promise<Bench>>> = {
  policy: async () => (await import('./policy.bench.js')).runPolicyBench,
  inspect: async () => (await import('./inspect.bench.js')).runInspectBench,
  apply: async () => (await import('./apply.bench.js')).runApplyBench,
  reconcile: async () => (await import('./reconcile.bench.js')).runReconcileBench,
  review: async () => (await import('./review.bench.js')).runReviewBench,
  ephemeral: async () => (await import('./ephemeral.bench.js')).runEphemeralBench,
  candidates: async () => (await import('./candidates.bench.js')).runCandidatesBench,
  fleet: async () => (await import('./fleet.bench.js')).runFleetBench,
  generate: async () => (await import('./generate.bench.js')).runGenerateBench,
  'cli-start': async () => (await import('./cli-start.bench.js')).runCliStartBench,
  'hot-paths': async () => (await import('./hot-paths.bench.js')).runHotPathsBench,
  conflicts: async () => (await import('./conflicts.bench.js')).runConflictsBench,
  'planner-scale': async () => (await import('./planner-scale.bench.js')).runPlannerScaleBench,
  execution: async () => (await import('./execution.bench.js')).runExecutionBench,
  gateway: async () => (await import('./gateway.bench.js')).runGatewayBench,
  'tracing-off': async () => (await import('./tracing-off.bench.js')).runTracingOffBench,
};

/** Benchmarks that never touch PostgreSQL. */
const WITHOUT_POSTGRES: ReadonlySet<string> = new Set(['policy', 'hot-paths', 'conflicts']);

/**
 * Before measuring, the bench server's shared catalogs are vacuumed: the day's created and dropped roles and
 * databases leave dead rows that would otherwise be measured too (tens of thousands slowed CI by minutes).
 * Not in a bench's own child processes (`--floor`), which start mid-measurement. A server that does not
 * answer is left to the bench, which says so itself.
 */
async function prepareBenchServer(name: string, args: readonly string[]): Promise<void> {
  if (WITHOUT_POSTGRES.has(name) || args.includes('--floor')) return;
  try {
    const { deadBefore, deadAfter, ms } = await vacuumSharedCatalogs(BENCH_ADMIN_URL);
    console.error(
      `bench server: ${deadBefore} dead rows in the shared catalogs before VACUUM, ${deadAfter} after (${ms} ms)`,
    );
  } catch (error) {
    console.error(`bench server: shared catalogs not vacuumed (${(error as Error).message})`);
  }
}

const [name, ...args] = process.argv.slice(2);
const load = name === undefined ? undefined : BENCHMARKS[name];
if (load === undefined) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHMARKS).join('|')}>`);
  process.exitCode = 2;
} else {
  await prepareBenchServer(name!, args);
  await (
    await load()
  )(fileURLToPath(import.meta.url), args);
}
