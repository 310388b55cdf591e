// `npm run bench -- reconcile`: the whole loop (gateway -> planner -> inspector -> executor) on the e2e stack.
// (a) no-op force-reconcile latency of a converged policy over the 1,000-schema catalog; (b) 50 policies on 50
// databases converging from scratch with 1 vs 2 executors -> bench/results/reconcile.json.

import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

import { inspect, openConnection, readFingerprint } from '@rolepolicy/catalog';
import type { PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/kube';
import { deriveManagedScope, expandPolicy, type PolicyContent } from '@rolepolicy/policy';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import pg from 'pg';

import { condition, sleep, startStack, waitFor, type ServiceName, type Stack } from '../e2e/stack.js';
import { BENCH_ADMIN_URL, median, mixedRelationsLoop, round, writeResult } from './pg-bench-support.js';

const RELATIONS = 50;
const NAMESPACE = 'bench';
const POLL_MS = 20;

type Options = {
  readonly scale: number;
  readonly runs: number;
  readonly policies: number;
  readonly only: 'noop' | 'converge' | undefined;
};

function parse(args: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const only = value('--only');
  return {
    scale: Number(value('--scale') ?? 1),
    runs: Number(value('--runs') ?? 20),
    policies: Number(value('--policies') ?? 50),
    only: only === 'noop' || only === 'converge' ? only : undefined,
  };
}

/** p-th percentile (nearest rank) of a list. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function stats(values: readonly number[]): { p50: number; p95: number; max: number; mean: number } {
  return {
    p50: round(percentile(values, 50)),
    p95: round(percentile(values, 95)),
    max: round(Math.max(...values)),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length),
  };
}

/**
 * e2e/stack.ts finds the CRDs at `../deploy/crds` from its own file, which from dist/e2e/ is dist/deploy/crds:
 * link it to the repository's deploy/crds (dist is build output, never committed).
 */
export function linkCrdsIntoDist(): void {
  const target = fileURLToPath(new URL('../../deploy/crds', import.meta.url));
  const link = fileURLToPath(new URL('../deploy/crds', import.meta.url));
  if (existsSync(link)) return;
  mkdirSync(fileURLToPath(new URL('../deploy', import.meta.url)), { recursive: true });
  symlinkSync(target, link, 'dir');
}

/** Sums and counts of the histograms a service exposes, keyed `<name>{<labels>}`. */
export async function histograms(
  stack: Stack,
  service: ServiceName,
): Promise<Map<string, { sum: number; count: number }>> {
  const url = stack.services.find((s) => s.name === service)!.url;
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, { sum: number; count: number }>();
  for (const line of text.split('\n')) {
    const m = /^(rp_\w+)_(sum|count)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) continue;
    const key = `${m[1]}${m[3] ?? ''}`;
    const entry = out.get(key) ?? { sum: 0, count: 0 };
    entry[m[2] as 'sum' | 'count'] = Number(m[4]);
    out.set(key, entry);
  }
  return out;
}

/** Per histogram: count and mean (ms) of the observations between two scrapes. */
function histogramDelta(
  before: Map<string, { sum: number; count: number }>,
  after: Map<string, { sum: number; count: number }>,
): Record<string, { count: number; meanMs: number }> {
  const out: Record<string, { count: number; meanMs: number }> = {};
  for (const [key, a] of after) {
    const b = before.get(key) ?? { sum: 0, count: 0 };
    const count = a.count - b.count;
    if (count > 0) out[key] = { count, meanMs: round(((a.sum - b.sum) / count) * 1000) };
  }
  return out;
}

export function isReconciled(p: PostgresPolicy | undefined): boolean {
  const ready = condition(p?.status?.conditions, 'Ready');
  return ready?.status === 'True' && ready.reason === 'Reconciled';
}

/** The catalog of inspect.bench (schemas x 50 mixed relations), already granted as the policy declares. */
export function catalogSql(schemas: number, rolePrefix: string): string {
  return `
DO $$
DECLARE s int; k int; schema text; role text;
BEGIN
  FOR s IN 0..${schemas - 1} LOOP
    schema := 'bench_s' || s;
    role := '${rolePrefix}' || schema || '_reader';
    EXECUTE format('CREATE ROLE %I', role);
    EXECUTE format('CREATE SCHEMA %I', schema);
${mixedRelationsLoop(RELATIONS)}
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', schema, role);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', schema, role);
    COMMIT;
  END LOOP;
END $$;`;
}

/** (a) Force-reconcile latency of a converged policy covering every schema of the catalog. */
async function noopReconcile(stack: Stack, options: Options): Promise<Record<string, unknown>> {
  const schemas = Math.max(1, Math.round(1000 * options.scale));
  const db = await stack.createDatabase('reconcile');
  let started = performance.now();
  await db.sql(catalogSql(schemas, stack.rolePrefix));
  await db.sql('ANALYZE');
  const buildSeconds = (performance.now() - started) / 1000;
  console.log(`catalog: ${schemas} schemas x ${RELATIONS} relations built in ${round(buildSeconds)} s`);

  started = performance.now();
  const content = {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
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
  await stack.resources.createPolicy('catalog', content);
  const converged = await waitFor(
    'the catalog policy to report Ready=True/Reconciled',
    async () => {
      const p = await stack.resources.policy('catalog');
      return isReconciled(p) ? p : undefined;
    },
    {
      timeoutMs: 15 * 60_000,
      intervalMs: 250,
      describe: () => stack.resources.policy('catalog').then((p) => p?.status),
    },
  );
  const initialSeconds = (performance.now() - started) / 1000;
  const initialPlans = (await stack.resources.plans('catalog')).map((p) => p.status?.phase);
  console.log(`initial convergence: ${round(initialSeconds)} s, plans ${JSON.stringify(initialPlans)}`);
  const summary = converged.status?.change_summary;

  const requestOne = async (value: string): Promise<number> => {
    const t0 = performance.now();
    await stack.resources.requestReconcile('catalog', value);
    await waitFor(
      `lastHandledReconcileAt = ${value}`,
      async () => (await stack.resources.policy('catalog'))?.status?.lastHandledReconcileAt === value,
      { timeoutMs: 120_000, intervalMs: POLL_MS },
    );
    return performance.now() - t0;
  };
  // One warm-up reconcile (JIT, pools, caches), not counted.
  await requestOne(`warmup-${Date.now()}`);
  const before = {
    planner: await histograms(stack, 'planner'),
    inspector: await histograms(stack, 'inspector'),
  };
  const samples: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    samples.push(await requestOne(`bench-${i}-${Date.now()}`));
    await sleep(100);
  }
  const after = {
    planner: await histograms(stack, 'planner'),
    inspector: await histograms(stack, 'inspector'),
  };
  const finalPolicy = await stack.resources.policy('catalog');
  const finalPlans = await stack.resources.plans('catalog');
  const latency = stats(samples);
  console.log(`no-op reconcile over ${options.runs} runs: ${JSON.stringify(latency)} ms`);
  const floor = await inspectionFloor(db.url, content, options.runs);
  console.log(
    `managed-scope inspection alone: ${floor.inspectMs} ms, fingerprint alone: ${floor.fingerprintMs} ms`,
  );
  return {
    schemas,
    relationsPerSchema: RELATIONS,
    profileRoles: schemas,
    buildSeconds: round(buildSeconds),
    initialConvergenceSeconds: round(initialSeconds),
    initialChangeSummary: summary ?? null,
    runs: options.runs,
    latencyMs: latency,
    samplesMs: samples.map(round),
    // The floor, same run: inspect() of the policy's managed scope straight on the database (median), and the
    // catalog fingerprint alone (what a converged pass reads); the ratio is the no-op p50 over the inspection.
    inspectMs: floor.inspectMs,
    fingerprintMs: floor.fingerprintMs,
    p50OverInspect: round(latency.p50 / floor.inspectMs),
    fullInspectionEvery: Number(process.env['PLANNER_FULL_INSPECTION_EVERY'] ?? 12),
    stillReconciled: isReconciled(finalPolicy),
    plansCreatedDuringRuns: finalPlans.length - initialPlans.length,
    // Means over the measured runs from the services' own histograms: the planner pass includes the
    // inspector round trip; the rest of the latency is gateway event delivery, status write and polling.
    plannerHistograms: histogramDelta(before.planner, after.planner),
    inspectorHistograms: histogramDelta(before.inspector, after.inspector),
  };
}

/**
 * The managed-scope inspection alone, and the fingerprint alone, on the bench database: medians of `runs`
 * reads after one warm-up, each on a pooled connection as the inspector has them.
 */
async function inspectionFloor(
  url: string,
  content: Record<string, unknown>,
  runs: number,
): Promise<{ inspectMs: number; fingerprintMs: number }> {
  const expansion = expandPolicy(content as unknown as PolicyContent, { policyName: 'catalog' });
  if (!expansion.ok) throw new Error('the bench policy does not expand');
  const scope = deriveManagedScope(expansion.desired);
  const connection = openConnection({ url });
  try {
    const inspectRead = (): Promise<unknown> => inspect(connection.db, scope, connection.target);
    const fingerprintRead = (): Promise<unknown> =>
      connection.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => readFingerprint(trx, scope));
    const timed = async (read: () => Promise<unknown>): Promise<number> => {
      const t0 = performance.now();
      await read();
      return performance.now() - t0;
    };
    await inspectRead();
    await fingerprintRead();
    // Interleaved, so a change of load on the shared machine hits both alike.
    const inspections: number[] = [];
    const fingerprints: number[] = [];
    for (let i = 0; i < Math.max(3, Math.min(runs, 10)); i++) {
      inspections.push(await timed(inspectRead));
      fingerprints.push(await timed(fingerprintRead));
    }
    const inspectMs = round(median(inspections));
    const fingerprintMs = round(median(fingerprints));
    return { inspectMs, fingerprintMs };
  } finally {
    await connection.close();
  }
}

/** Small realistic content for policy `i`: two profiles over two schemas, a login app role, a reporting role. */
function smallPolicy(
  stack: Stack,
  i: number,
  connection: unknown,
  database: string,
): Record<string, unknown> {
  const p = `${stack.rolePrefix}p${i}_`;
  return {
    connection,
    mode: 'apply',
    approval: 'auto',
    role_pattern: `${p}{schema}_{profile}`,
    profiles: {
      viewer: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
        ],
      },
      editor: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        ],
      },
    },
    schemas: [
      { name: 'orders', profiles: ['viewer', 'editor'] },
      { name: 'billing', profiles: ['viewer'] },
    ],
    roles: [{ name: `${p}app`, login: true }, { name: `${p}reporting` }],
    grants: [
      { role: `${p}app`, object: { type: 'database', name: database }, privileges: ['CONNECT'] },
      { role: `${p}reporting`, object: { type: 'database', name: database }, privileges: ['CONNECT'] },
    ],
    memberships: [
      { role: `${p}orders_editor`, members: [{ name: `${p}app` }] },
      { role: `${p}billing_viewer`, members: [{ name: `${p}reporting` }] },
    ],
  };
}

/** (b) `policies` policies on as many databases, created at once; time until all are Reconciled and Applied. */
async function convergeFromScratch(stack: Stack, policies: number): Promise<Record<string, unknown>> {
  const dbs = [];
  for (let i = 0; i < policies; i += 10) {
    dbs.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(10, policies - i) }, async (_, k) => {
          const db = await stack.createDatabase(`c${i + k}`);
          await db.sql(`CREATE SCHEMA orders; CREATE TABLE orders.items (id int); CREATE TABLE orders.lines (id int);
                        CREATE SCHEMA billing; CREATE TABLE billing.invoices (id int);
                        CREATE VIEW billing.open AS SELECT id FROM billing.invoices`);
          return db;
        }),
      )),
    );
  }
  const names = dbs.map((_, i) => `conv-${i}`);
  const readyAt = new Map<string, number>();
  const started = performance.now();
  await Promise.all(
    dbs.map((db, i) =>
      stack.resources.createPolicy(names[i]!, smallPolicy(stack, i, db.connection, db.database)),
    ),
  );
  const coords = { group: GROUP, version: VERSION, namespace: NAMESPACE };
  await waitFor(
    `all ${policies} policies Reconciled with an Applied plan`,
    async () => {
      const [policyList, planList] = await Promise.all([
        stack.custom.listNamespacedCustomObject({ ...coords, plural: KIND_NAMES.PostgresPolicy.plural }),
        stack.custom.listNamespacedCustomObject({ ...coords, plural: KIND_NAMES.PostgresPolicyPlan.plural }),
      ]);
      const applied = new Set(
        (planList as { items: PostgresPolicyPlan[] }).items
          .filter((p) => p.status?.phase === 'Applied')
          .flatMap((p) => (p.metadata.ownerReferences ?? []).map((o) => o.uid)),
      );
      for (const p of (policyList as { items: PostgresPolicy[] }).items) {
        if (!readyAt.has(p.metadata.name!) && isReconciled(p) && applied.has(p.metadata.uid!)) {
          readyAt.set(p.metadata.name!, performance.now() - started);
        }
      }
      return readyAt.size === policies;
    },
    {
      timeoutMs: 10 * 60_000,
      intervalMs: 200,
      describe: () => ({
        converged: readyAt.size,
        missing: names.filter((n) => !readyAt.has(n)).slice(0, 5),
      }),
    },
  );
  const totalSeconds = (performance.now() - started) / 1000;
  // Sanity: the roles the policies declare exist (2 declared + 3 profile roles per policy).
  const admin = new pg.Client({ connectionString: BENCH_ADMIN_URL });
  await admin.connect();
  const { rows } = await admin
    .query<{ n: string }>('SELECT count(*) AS n FROM pg_roles WHERE starts_with(rolname, $1)', [
      stack.rolePrefix,
    ])
    .finally(() => admin.end());
  const perPolicy = [...readyAt.values()].map((ms) => ms / 1000);
  console.log(`${policies} policies converged in ${round(totalSeconds)} s`);
  return {
    policies,
    totalSeconds: round(totalSeconds),
    perPolicySeconds: stats(perPolicy),
    rolesInDatabase: Number(rows[0]?.n ?? 0),
  };
}

/** Starts a stack, runs `body`, and always stops it (databases and roles included), also on Ctrl-C. */
export async function withStack<T>(executors: number, body: (stack: Stack) => Promise<T>): Promise<T> {
  const stack = await startStack({ executors, namespace: NAMESPACE });
  const onSignal = (): void => {
    void stack.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await stack.waitReady(60_000);
    return await body(stack);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stack.stop();
  }
}

export async function serverVersion(): Promise<string> {
  const admin = new pg.Client({ connectionString: BENCH_ADMIN_URL });
  await admin.connect();
  try {
    return (await admin.query<{ v: string }>('SHOW server_version')).rows[0]!.v;
  } finally {
    await admin.end();
  }
}

/** Runs the reconcile benchmark. `--scale 0.1` (schemas of (a)), `--runs 20`, `--policies 50`, `--only noop|converge`. */
export async function runReconcileBench(_script: string, args: readonly string[]): Promise<void> {
  const options = parse(args);
  linkCrdsIntoDist();
  console.log(
    `reconcile bench: scale ${options.scale} (${Math.round(1000 * options.scale)} schemas), ` +
      `${options.runs} runs, ${options.policies} policies`,
  );
  const report: Record<string, unknown> = {
    benchmark: 'reconcile',
    description:
      '(a) force-reconcile (annotation write -> status.lastHandledReconcileAt) latency of a converged apply/auto policy ' +
      'whose reader profile (USAGE, SELECT on tables, views, materialized views) covers every schema of the catalog (schemas x 50 relations, pre-granted); ' +
      '(b) N policies on N databases (2 profiles over 2 schemas, 2 roles, memberships) created at once until all are ' +
      'Ready=True/Reconciled with an Applied plan, with 1 and 2 executors. Services in-process on one node (e2e stack).',
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
  };
  if (options.only !== 'converge') {
    report['noopReconcile'] = await withStack(1, (stack) => noopReconcile(stack, options));
  }
  if (options.only !== 'noop') {
    const one = await withStack(1, (stack) => convergeFromScratch(stack, options.policies));
    const two = await withStack(2, (stack) => convergeFromScratch(stack, options.policies));
    report['convergeFromScratch'] = {
      oneExecutor: one,
      twoExecutors: two,
      speedup: Math.round(((one['totalSeconds'] as number) / (two['totalSeconds'] as number)) * 100) / 100,
    };
  }
  console.log(JSON.stringify(report, null, 2));
  writeResult('reconcile', report);
}
