// `npm run bench -- candidates`: 32 open PostgresPolicyCandidates on one converged policy over the
// 1,000-schema catalog (schemas x 50 relations), planned in the policy's reconcile from one shared
// inspection. Measured in the same run: one policy reconcile without candidates (the floor) and with the
// 32 candidates, from the planner's own pass histogram (which includes the candidate pass) and the
// inspector's request count -> bench/results/candidates.json.
import os from 'node:os';

import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';

import { sleep, waitFor, type Stack } from '../e2e/stack.js';
import { round, writeResult } from './pg-bench-support.js';
import {
  catalogSql,
  histograms,
  isReconciled,
  linkCrdsIntoDist,
  serverVersion,
  withStack,
} from './reconcile.bench.js';

const NAMESPACE = 'bench';

type Options = { readonly scale: number; readonly candidates: number; readonly runs: number };

function parse(args: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  return {
    scale: Number(value('--scale') ?? 1),
    candidates: Number(value('--candidates') ?? 32),
    runs: Number(value('--runs') ?? 3),
  };
}

/** Sum of counts and sums of every series of one histogram. */
async function histogram(stack: Stack, service: 'planner' | 'inspector', name: string) {
  let count = 0;
  let sum = 0;
  for (const [key, value] of await histograms(stack, service)) {
    if (!key.startsWith(`${name}{`) && key !== name) continue;
    count += value.count;
    sum += value.sum;
  }
  return { count, sum };
}

/** Forces `runs` passes of the policy, one at a time; mean pass seconds and inspections per pass. */
async function passes(stack: Stack, runs: number): Promise<{ seconds: number; inspectionsPerPass: number }> {
  const pass0 = await histogram(stack, 'planner', 'rp_planner_reconcile_seconds');
  const inspect0 = await histogram(stack, 'inspector', 'rp_inspect_duration_seconds');
  for (let i = 0; i < runs; i++) {
    const target = pass0.count + i + 1;
    await stack.resources.requestReconcile('catalog', `bench-${Date.now()}-${i}`);
    // The pass is counted after its last command, candidates included (status first, then candidates).
    await waitFor(
      `planner pass ${target}`,
      async () => (await histogram(stack, 'planner', 'rp_planner_reconcile_seconds')).count >= target,
      { timeoutMs: 10 * 60_000, intervalMs: 50 },
    );
    await sleep(200);
  }
  const pass1 = await histogram(stack, 'planner', 'rp_planner_reconcile_seconds');
  const inspect1 = await histogram(stack, 'inspector', 'rp_inspect_duration_seconds');
  const count = pass1.count - pass0.count;
  return {
    seconds: Math.round(((pass1.sum - pass0.sum) / count) * 1000) / 1000,
    inspectionsPerPass: round((inspect1.count - inspect0.count) / count),
  };
}

async function bench(stack: Stack, options: Options): Promise<Record<string, unknown>> {
  const schemas = Math.max(1, Math.round(1000 * options.scale));
  const db = await stack.createDatabase('candidates');
  await db.sql(catalogSql(schemas, stack.rolePrefix));
  await db.sql('ANALYZE');
  const content = {
    role_pattern: `${stack.rolePrefix}{schema}_{profile}`,
    profiles: {
      reader: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
          { object: { type: 'view', name: '*' }, privileges: ['SELECT'] },
          { object: { type: 'materialized_view', name: '*' }, privileges: ['SELECT'] },
        ],
      },
    },
    schemas: Array.from({ length: schemas }, (_, s) => ({ name: `bench_s${s}`, profiles: ['reader'] })),
  };
  await stack.resources.createPolicy('catalog', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    ...content,
  });
  await waitFor(
    'the catalog policy converged',
    async () => isReconciled(await stack.resources.policy('catalog')),
    {
      timeoutMs: 15 * 60_000,
      intervalMs: 250,
    },
  );
  await passes(stack, 1); // warm-up
  const floor = await passes(stack, options.runs);
  console.log(
    `one policy reconcile without candidates: ${floor.seconds} s, ${floor.inspectionsPerPass} inspections`,
  );

  // Each proposal: the policy's content plus one new role of its own.
  const started = performance.now();
  for (let i = 0; i < options.candidates; i++) {
    await stack.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: KIND_NAMES.PostgresPolicyCandidate.plural,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PostgresPolicyCandidate',
        metadata: { name: `proposal-${i}`, namespace: NAMESPACE },
        spec: {
          policyRef: { name: 'catalog' },
          content: { ...content, roles: [{ name: `${stack.rolePrefix}proposal_${i}`, login: false }] },
        },
      },
    });
  }
  await waitFor(
    `all ${options.candidates} candidates Planned`,
    async () => {
      const list = (await stack.custom.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        plural: KIND_NAMES.PostgresPolicyCandidate.plural,
        namespace: NAMESPACE,
      })) as { items: { status?: { phase?: string; planRef?: unknown } }[] };
      return (
        list.items.filter((c) => c.status?.phase === 'Planned' && c.status.planRef).length ===
        options.candidates
      );
    },
    { timeoutMs: 30 * 60_000, intervalMs: 500 },
  );
  const firstPlanningSeconds = round((performance.now() - started) / 1000);
  console.log(`${options.candidates} candidates filed and planned in ${firstPlanningSeconds} s`);
  const withCandidates = await passes(stack, options.runs);
  console.log(`one policy reconcile with ${options.candidates} candidates: ${withCandidates.seconds} s`);
  // What the candidates say after the measured passes (all Ready=True/Planned when planning worked).
  const after = (await stack.custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: KIND_NAMES.PostgresPolicyCandidate.plural,
    namespace: NAMESPACE,
  })) as { items: { status?: { conditions?: { type: string; status: string; reason?: string }[] } }[] };
  const readyReasons: Record<string, number> = {};
  for (const c of after.items) {
    const ready = c.status?.conditions?.find((x) => x.type === 'Ready');
    const label = `${ready?.status ?? '-'}/${ready?.reason ?? '-'}`;
    readyReasons[label] = (readyReasons[label] ?? 0) + 1;
  }
  return {
    schemas,
    relationsPerSchema: 50,
    candidates: options.candidates,
    // Inspections made for the candidates in one policy reconcile (the policy's own one excluded).
    inspections: round(withCandidates.inspectionsPerPass - floor.inspectionsPerPass),
    seconds: withCandidates.seconds,
    singleReconcileSeconds: floor.seconds,
    ratio: Math.round((withCandidates.seconds / floor.seconds) * 100) / 100,
    goal: 'one shared inspection, seconds < 3 x singleReconcileSeconds',
    inspectionsPerPassWithoutCandidates: floor.inspectionsPerPass,
    inspectionsPerPassWithCandidates: withCandidates.inspectionsPerPass,
    firstPlanningSeconds,
    candidateReadyAfterRuns: readyReasons,
    runs: options.runs,
  };
}

export async function runCandidatesBench(_script: string, args: readonly string[]): Promise<void> {
  const options = parse(args);
  linkCrdsIntoDist();
  const report = {
    benchmark: 'candidates',
    description:
      'N open PostgresPolicyCandidates (each the policy content plus one role) on one converged apply/auto policy ' +
      'whose reader profile covers every schema of the catalog (schemas x 50 relations); mean planner pass ' +
      '(policy reconcile plus candidate pass) and inspector requests per pass, against the same pass without ' +
      'candidates in the same run. Services in-process on one node (e2e stack).',
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGb: round(os.totalmem() / 1024 ** 3),
      loadAverage1mAtStart: round(os.loadavg()[0]!),
    },
    node: process.version,
    postgres: await serverVersion(),
    scale: options.scale,
    fullScale: options.scale === 1,
    measuredAt: new Date().toISOString(),
    ...(await withStack(1, (stack) => bench(stack, options))),
  };
  console.log(JSON.stringify(report, null, 2));
  writeResult('candidates', report);
}
