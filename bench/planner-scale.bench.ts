// `npm run bench -- planner-scale`: how one planner scales with the fleet (issue 28: "5,000 policies on one
// planner: CPU per pass per policy grows <= 1.2x from 500 to 5,000, peak RSS <= 1 GiB"). Only the planner is
// measured, so the policies share a few real databases (each policy its own role prefix and its own two
// schemas, as the fleet policy's orders and billing: no two claim one role or schema) and wait for a person's
// approval (no executor runs: nothing changes the catalog under the planner). Every size meets the same
// databases, made for the largest, so a pass's inspection costs the same at every size.
// For each fleet size, on a fresh product: every policy is created at once and planned (the first wave: an
// inspection, a plan and its review artifact each); then every policy is asked to reconcile (the
// `rolepolicy.io/reconcile-requested-at` annotation) and passes again (the steady state, as an interval's
// pass: an inspection and a diff that finds its plan already waiting). Reported per size: the
// planner's CPU per pass in each phase, its peak RSS, and the ratio of the largest size to the smallest.
// -> bench/results/planner-scale.json. Options: --policies 500,5000, --databases 20.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { GROUP, KIND_NAMES, RECONCILE_REQUESTED_AT_ANNOTATION, VERSION } from '@rolepolicy/kube';

import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { cpuDelta } from './cpu-time.js';
import { failureReasons, formatReasons, type FailureCount } from './fleet-health.js';
import { FleetDatabases } from './fleet-databases.js';
import { smallPolicy } from './fleet-policy.js';
import { databaseUrl, round, runOn, writeResult } from './pg-bench-support.js';
import { byLabel, counterTotal } from './service-metrics.js';
import { startProductProcesses, type ProductProcesses } from './service-processes.js';

const NAMESPACE = 'bench';
const PASSES = 'rp_planner_reconcile_seconds_count';
const RSS_GOAL_MIB = 1024;
const GROWTH_GOAL = 1.2;

type Options = { readonly policies: readonly number[]; readonly databases: number };

// Longer than any first wave, so no periodic pass mixes into what is measured.
const INTERVAL = '1h';

function parse(args: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  return {
    policies: (value('--policies') ?? '500,5000').split(',').map(Number),
    databases: Number(value('--databases') ?? 20),
  };
}

/** What one phase cost the planner. */
type Phase = {
  readonly passes: number;
  readonly cpuSeconds: number;
  readonly cpuMsPerPass: number;
  /** Passes by decision (`awaiting_approval`, ...): a `conflict` means the bench's policies overlap. */
  readonly decisions: Record<string, number>;
};

/**
 * Runs `during` and then waits until the planner has made at least `atLeast` more passes and none for
 * `quietMs`; returns the passes and the planner's CPU over the whole phase.
 */
async function phase(
  product: ProductProcesses,
  atLeast: number,
  quietMs: number,
  during: () => Promise<void> = async () => undefined,
): Promise<Phase> {
  const cpuBefore = product.cpuSeconds();
  const decisionsBefore = await byLabel(product, PASSES, 'decision');
  const passesBefore = await counterTotal(product, PASSES);
  await during();
  let last = passesBefore;
  let quietSince = Date.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await counterTotal(product, PASSES);
    if (now !== last) [last, quietSince] = [now, Date.now()];
    else if (now - passesBefore >= atLeast && Date.now() - quietSince >= quietMs) break;
  }
  const passes = last - passesBefore;
  const cpuSeconds = cpuDelta(cpuBefore, product.cpuSeconds())['planner'] ?? NaN;
  const decisions: Record<string, number> = {};
  for (const [decision, total] of await byLabel(product, PASSES, 'decision')) {
    const grown = total - (decisionsBefore.get(decision) ?? 0);
    if (grown > 0) decisions[decision] = grown;
  }
  return {
    passes,
    cpuSeconds: round(cpuSeconds),
    cpuMsPerPass: round((cpuSeconds * 1000) / passes),
    decisions,
  };
}

/** Policy `i`'s schemas: the fleet policy's `orders` and `billing`, its own. */
const schemasOf = (i: number): { orders: string; billing: string } => ({ orders: `o${i}`, billing: `b${i}` });

/**
 * Creates, in each database, the schemas and relations of the policies (up to `total`) that target it, 50
 * policies to a transaction (one transaction for all took more locks than a shared server has).
 */
async function createPolicySchemas(dbs: FleetDatabases, total: number): Promise<void> {
  const step = dbs.names.length;
  for (const [k, name] of dbs.names.entries()) {
    for (let first = k; first < total; first += 50 * step) {
      const last = Math.min(total - 1, first + 49 * step);
      await runOn(
        databaseUrl(name),
        `DO $$ DECLARE i int; o text; b text; BEGIN
           FOR i IN SELECT g FROM generate_series(${first}, ${last}, ${step}) AS g LOOP
             o := 'o' || i; b := 'b' || i;
             EXECUTE format('CREATE SCHEMA %I', o);
             EXECUTE format('CREATE TABLE %I.items (id int)', o);
             EXECUTE format('CREATE TABLE %I.lines (id int)', o);
             EXECUTE format('CREATE SCHEMA %I', b);
             EXECUTE format('CREATE TABLE %I.invoices (id int)', b);
             EXECUTE format('CREATE VIEW %I.open AS SELECT id FROM %I.invoices', b, b);
           END LOOP;
         END $$`,
      );
    }
  }
}

/** The fleet's small policy for policy `i`, on its own schemas, waiting for a person's approval. */
function scalePolicy(dbs: FleetDatabases, i: number): Record<string, unknown> {
  const k = i % dbs.names.length;
  const { orders, billing } = schemasOf(i);
  const text = JSON.stringify(smallPolicy(`${dbs.rolePrefix}${i}_`, dbs.names[k]!, `db-${k}`))
    .replaceAll('orders', orders)
    .replaceAll('billing', billing);
  return { ...(JSON.parse(text) as Record<string, unknown>), approval: 'manual', interval: INTERVAL };
}

/** Runs `each(i)` for i < count, 100 at a time. */
async function inBatches(count: number, each: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += 100)
    await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, j) => each(i + j)));
}

async function createPolicies(product: ProductProcesses, dbs: FleetDatabases, count: number): Promise<void> {
  const custom = product.emulator.kubeConfig(NAMESPACE).makeApiClient(CustomObjectsApi);
  const create = (i: number): Promise<unknown> =>
    custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: KIND_NAMES.PostgresPolicy.plural,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PostgresPolicy',
        metadata: { name: `scale-${i}`, namespace: NAMESPACE },
        spec: scalePolicy(dbs, i),
      },
    });
  await inBatches(count, create);
}

/** Asks every policy to reconcile now, as a person would: a pass that leaves the spec as it is. */
async function touchPolicies(product: ProductProcesses, count: number): Promise<void> {
  const custom = product.emulator.kubeConfig(NAMESPACE).makeApiClient(CustomObjectsApi);
  const at = new Date().toISOString();
  await inBatches(count, (i) =>
    custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: KIND_NAMES.PostgresPolicy.plural,
        name: `scale-${i}`,
        body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: at } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );
}

/** Plans in the namespace (one per policy once the first wave is done). */
async function planCount(product: ProductProcesses): Promise<number> {
  const custom = product.emulator.kubeConfig(NAMESPACE).makeApiClient(CustomObjectsApi);
  const list = (await custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NAMESPACE,
    plural: KIND_NAMES.PostgresPolicyPlan.plural,
  })) as { items: unknown[] };
  return list.items.length;
}

type SizeResult = {
  readonly policies: number;
  readonly plans: number;
  readonly firstWave: Phase & { readonly seconds: number };
  readonly steady: Phase;
  readonly plannerPeakRssMiB: number;
  readonly cpuSecondsByService: Record<string, number>;
  /** The most frequent warnings and errors in the services' logs. */
  readonly failures: readonly FailureCount[];
};

async function measureSize(dbs: FleetDatabases, count: number, logRoot: string): Promise<SizeResult> {
  const logDir = path.join(logRoot, `policies-${count}`);
  mkdirSync(logDir, { recursive: true });
  const product = await startProductProcesses({ executors: 0, namespace: NAMESPACE, logDir });
  try {
    await dbs.createSecrets(product.emulator.kubeConfig(NAMESPACE).makeApiClient(CoreV1Api), NAMESPACE);
    const cpuStart = product.cpuSeconds();
    const started = performance.now();
    const firstWave = await phase(product, count, 5000, () => createPolicies(product, dbs, count));
    const waveSeconds = round((performance.now() - started) / 1000);
    const plans = await planCount(product);
    const steady = await phase(product, count, 5000, () => touchPolicies(product, count));
    return {
      policies: count,
      plans,
      firstWave: { ...firstWave, seconds: waveSeconds },
      steady,
      plannerPeakRssMiB: product.peakRssMiB()['planner'] ?? NaN,
      cpuSecondsByService: cpuDelta(cpuStart, product.cpuSeconds()),
      failures: failureReasons(logDir),
    };
  } finally {
    await product.stop();
  }
}

/** Prints and writes the figures; fails when a goal is missed. */
export async function runPlannerScaleBench(_script: string, args: readonly string[]): Promise<void> {
  const options = parse(args);
  const dbs = new FleetDatabases();
  const sizes: SizeResult[] = [];
  // Every service's log is kept, as in the fleet bench: a failed pass must say why.
  const logRoot =
    process.env['BENCH_LOG_DIR'] ?? mkdtempSync(path.join(os.tmpdir(), 'rolepolicy-planner-scale-logs-'));
  console.log(`service logs: ${logRoot}`);
  try {
    await dbs.create(options.databases);
    await createPolicySchemas(dbs, Math.max(...options.policies));
    for (const count of options.policies) {
      const result = await measureSize(dbs, count, logRoot);
      console.log(`${count} policies: ${JSON.stringify({ ...result, failures: undefined })}`);
      if (result.failures.length > 0) console.log(formatReasons(result.failures));
      sizes.push(result);
    }
  } finally {
    await dbs.dispose();
  }
  const [smallest, largest] = [sizes[0]!, sizes.at(-1)!];
  const growth = {
    firstWave: round(largest.firstWave.cpuMsPerPass / smallest.firstWave.cpuMsPerPass),
    steady: round(largest.steady.cpuMsPerPass / smallest.steady.cpuMsPerPass),
  };
  const misses = [
    ...sizes.filter((s) => s.plans !== s.policies).map((s) => `${s.policies} policies left ${s.plans} plans`),
    ...sizes
      .filter((s) => (s.firstWave.decisions['conflict'] ?? 0) + (s.steady.decisions['conflict'] ?? 0) > 0)
      .map((s) => `${s.policies} policies: passes ended in conflict (the bench's policies overlap)`),
    ...Object.entries(growth)
      .filter(([, g]) => g > GROWTH_GOAL)
      .map(([name, g]) => `${name} CPU per pass grew ${g}x (goal <= ${GROWTH_GOAL}x)`),
    ...sizes
      .filter((s) => s.plannerPeakRssMiB > RSS_GOAL_MIB)
      .map(
        (s) =>
          `${s.policies} policies: planner peak RSS ${s.plannerPeakRssMiB} MiB (goal <= ${RSS_GOAL_MIB})`,
      ),
  ];
  const report = {
    benchmark: 'planner-scale',
    description:
      "One planner's CPU per pass and peak RSS as the fleet grows. Policies (the fleet benchmark's small policy, " +
      `approval manual) share ${options.databases} real databases, each its own role ` +
      'prefix; no executor runs. firstWave: all policies created at once until every one has its plan (an ' +
      'inspection, a plan and its review artifact each); steady: every policy asked to reconcile, until each passed ' +
      'again (an inspection and a diff finding its plan already waiting). growth: the largest size over the smallest.',
    node: process.version,
    databases: options.databases,
    sizes,
    growth,
    goals: { growth: GROWTH_GOAL, plannerPeakRssMiB: RSS_GOAL_MIB },
    misses,
    logDir: logRoot,
  };
  console.log(JSON.stringify({ growth, misses }, null, 2));
  writeResult('planner-scale', report);
  if (misses.length > 0) process.exitCode = 1;
}
