// Benchmark entry point: `npm run bench -- <name>` builds, then runs dist/bench/run.js with <name> first.
// Each benchmark registers one line below; benchmarks write their results under bench/results/.

import { fileURLToPath } from 'node:url';

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

const [name, ...args] = process.argv.slice(2);
const load = name === undefined ? undefined : BENCHMARKS[name];
if (load === undefined) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHMARKS).join('|')}>`);
  process.exitCode = 2;
} else {
  await (
    await load()
  )(fileURLToPath(import.meta.url), args);
}
