// `npm run bench -- fleet`: N databases (default 500), one small policy each (2 profiles x 2 schemas, 2 roles,
// memberships), created at once, with 1, 2 and 4 executor replicas (each EXECUTOR_CONCURRENCY slots): time until
// every policy is Ready=True/Reconciled with an Applied plan. The floor, in the same run: the SQL of those plans
// applied to the same databases by a pool of `psql -1 -f` processes with the executors' total concurrency; and
// the read-then-apply floor (read-apply-floor.ts): the same SQL behind the two catalog reads the product makes.
// Also the latency of a single small policy from creation to Applied, and each service's peak RSS.
// Every stage (each replica count, each floor) starts from freshly created databases without the roles of the
// stages before it. -> bench/results/fleet.json. Options: --databases N, --executors 1,2,4, --concurrency 4,
// --latency-runs 20, --no-steady (skips the steady wave after the last stage, fleet-steady.ts: a no-op
// reconcile of every converged policy against reading its fingerprint), --tracing (the services export OTLP
// traces to a receiver in this process; the report then gives the services' CPU per policy with tracing on,
// to compare with a run without it, and the single policy's hops from its trace, which must agree with the
// status times' within 1 ms: docs/tracing.md), --servers N (the databases spread round-robin over N embedded
// PostgreSQL servers this bench starts side by side, each with its own roles, locks and max_connections; the
// floors run on the same servers and PostgreSQL CPU is those servers' processes only; the report goes to
// bench/results/fleet-servers-<N>.json instead), --no-spine-floor (skips each stage's spine floor, spine-floor.ts:
// the stage's transport work per policy, JetStream and core messages, resource-stream deliveries to the caches
// and API writes, with no product logic, in processes of its own after the stage), --idle-seconds N (each
// stage's services idle for N s before its policies are created, idle-baseline.ts; default 15, 0 skips it).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import { GROUP, KIND_NAMES, VERSION, type PostgresPolicy, type PostgresPolicyPlan } from '@rolepolicy/kube';
import { deriveManagedScope, expandPolicy, type ManagedScope, type PolicyContent } from '@rolepolicy/policy';
import { OtlpReceiver, startEmbeddedPostgresServer, type EmbeddedPostgres } from '@rolepolicy/testing';

import { condition, PolicyResources } from '../e2e/support/resources.js';
import { round, writeResult } from './pg-bench-support.js';
import { benchCpuSeconds, cpuDelta, postgresCpuSeconds, postmasterPid } from './cpu-time.js';
import {
  resetStatements,
  stageStatements,
  statementsAvailable,
  type StageStatements,
} from './pg-statements.js';
import { FleetDatabases } from './fleet-databases.js';
import { smallPolicy } from './fleet-policy.js';
import { readApplyFloor, type ReadApplyJob } from './read-apply-floor.js';
import {
  ApiWriteCounter,
  failureReasons,
  formatReasons,
  slowModeOf,
  writesPerPolicy,
  type FailureCount,
} from './fleet-health.js';
import { grownPerPolicy, steadyWave } from './fleet-steady.js';
import { StageRecording, grownTotals, idleShare, measureSpineFloor } from './fleet-floors.js';
import { idleBaseline } from './idle-baseline.js';
import type { SpineFloor, StageShape } from './spine-floor.js';
import { byLabel, counterTotal } from './service-metrics.js';
import { startProductProcesses, type ProductProcesses } from './service-processes.js';
import { TRACE_HOPS, TraceHops, disagreeingHops, hopDifferences } from './trace-hops.js';

const NAMESPACE = 'bench';
/** The steady wave's floor reads fingerprints as many at a time as one inspector inspects (INSPECT_CONCURRENCY). */
const STEADY_FLOOR_CONCURRENCY = 8;

type Options = {
  readonly databases: number;
  readonly executors: readonly number[];
  readonly concurrency: number;
  readonly latencyRuns: number;
  readonly tracing: boolean;
  /** A steady wave (fleet-steady.ts) after the last stage converged; off with --no-steady. */
  readonly steady: boolean;
  /** Embedded servers to spread the databases over; 0: the bench server (RP_BENCH_PG_URL) alone. */
  readonly servers: number;
  /** Each stage's spine floor (spine-floor.ts); off with --no-spine-floor. */
  readonly spineFloor: boolean;
  /** Seconds of each stage's idle baseline before its policies are created; 0: none. */
  readonly idleSeconds: number;
};

/** The PostgreSQL major of the embedded servers of --servers (the CI system server's). */
const SERVERS_MAJOR = 15;

/** CPU seconds so far of the PostgreSQL the stages run on (every server on the machine, or --servers' own). */
let postgresCpu: () => number = () => postgresCpuSeconds();

function parse(args: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  return {
    databases: Number(value('--databases') ?? 500),
    executors: (value('--executors') ?? '1,2,4').split(',').map(Number),
    concurrency: Number(value('--concurrency') ?? 4),
    latencyRuns: Number(value('--latency-runs') ?? 20),
    tracing: args.includes('--tracing'),
    steady: !args.includes('--no-steady'),
    servers: Number(value('--servers') ?? 0),
    spineFloor: !args.includes('--no-spine-floor'),
    idleSeconds: Number(value('--idle-seconds') ?? 15),
  };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function isReady(p: PostgresPolicy): boolean {
  const ready = condition(p.status?.conditions, 'Ready');
  return ready?.status === 'True' && ready.reason === 'Reconciled';
}

type Listed = { policies: PostgresPolicy[]; plans: PostgresPolicyPlan[] };

async function listAll(custom: CustomObjectsApi): Promise<Listed> {
  const coords = { group: GROUP, version: VERSION, namespace: NAMESPACE };
  const [policies, plans] = await Promise.all([
    custom.listNamespacedCustomObject({ ...coords, plural: KIND_NAMES.PostgresPolicy.plural }),
    custom.listNamespacedCustomObject({ ...coords, plural: KIND_NAMES.PostgresPolicyPlan.plural }),
  ]);
  return {
    policies: (policies as { items: PostgresPolicy[] }).items,
    plans: (plans as { items: PostgresPolicyPlan[] }).items,
  };
}

/** Single small policies one after another: creation -> plan Applied, and -> Ready=True. */
async function singlePolicyLatency(
  product: ProductProcesses,
  dbs: FleetDatabases,
  first: number,
  runs: number,
  prefix: string,
): Promise<{
  applied: number[];
  ready: number[];
  hops: Record<string, number>[];
  /** The counted runs' policies. */
  names: string[];
  trace: string[];
}> {
  const kc = product.emulator.kubeConfig(NAMESPACE);
  const resources = new PolicyResources(kc, NAMESPACE);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const applied: number[] = [];
  const ready: number[] = [];
  const hops: Record<string, number>[] = [];
  const names: string[] = [];
  // Every NATS message of the last run, with its time since the policy's creation (subjects only).
  const nc = await connect({ servers: product.nats.url });
  let traceStart = 0;
  let trace: string[] = [];
  nc.subscribe('>', {
    callback: (_err, msg) => {
      if (!msg.subject.startsWith('$JS') && !msg.subject.startsWith('_INBOX')) {
        trace.push(`${Math.round(performance.now() - traceStart)} ms ${msg.subject}`);
      } else if (msg.subject.startsWith('_INBOX')) {
        trace.push(`${Math.round(performance.now() - traceStart)} ms reply`);
      }
    },
  });
  // Run 0 warms up (JIT, pools, caches) and is not counted.
  for (let r = 0; r <= runs; r++) {
    const k = first + r;
    const name = `latency-${r}`;
    const t0 = performance.now();
    const wall0 = Date.now();
    traceStart = t0;
    trace = [];
    const created = await resources.createPolicy(
      name,
      smallPolicy(`${prefix}l${r}_`, dbs.names[k]!, `db-${k}`),
    );
    let appliedAt: number | undefined;
    for (;;) {
      const [policy, plans] = await Promise.all([
        resources.policy(name),
        custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: NAMESPACE,
          plural: KIND_NAMES.PostgresPolicyPlan.plural,
        }) as Promise<{ items: PostgresPolicyPlan[] }>,
      ]);
      const plan = plans.items.find((p) =>
        (p.metadata.ownerReferences ?? []).some((o) => o.uid === created.metadata.uid),
      );
      if (appliedAt === undefined && plan?.status?.phase === 'Applied') appliedAt = performance.now() - t0;
      if (appliedAt !== undefined && policy !== undefined && isReady(policy)) {
        if (r > 0) {
          applied.push(appliedAt);
          ready.push(performance.now() - t0);
          hops.push(hopsOf(wall0, appliedAt, plan!, policy));
          names.push(name);
        }
        break;
      }
      if (performance.now() - t0 > 60_000) throw new Error(`${name} did not converge within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  await nc.close();
  return { applied, ready, hops, names, trace };
}

/**
 * Where one policy's time went, from the timestamps the services write (same clock as the bench): the
 * planner's decision (`computedAt`, after the gateway event, Secret reads and the inspector round trip), the
 * executor starting its SQL (`applyingSince`, after the plan write, request, visibility wait, lock and
 * re-inspection), the commit (`appliedAt`), the plan showing `Applied` in the API, and `Ready=True` written.
 * With --tracing the three hops between those status times are read from the trace too (trace-hops.ts).
 */
function hopsOf(
  wall0: number,
  appliedSeenMs: number,
  plan: PostgresPolicyPlan,
  policy: PostgresPolicy,
): Record<string, number> {
  const at = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : NaN);
  const computed = at(plan.status?.computedAt);
  const applying = at(plan.status?.applyingSince);
  const appliedAt = at(plan.status?.appliedAt);
  const ready = (policy.status?.conditions ?? []).find((c) => c.type === 'Ready') as
    { last_transition_time?: string } | undefined;
  const readyAt = at(ready?.last_transition_time);
  return {
    createToPlanned: computed - wall0,
    plannedToApplying: applying - computed,
    applyingToCommitted: appliedAt - applying,
    committedToAppliedVisible: wall0 + appliedSeenMs - appliedAt,
    committedToReadyWritten: readyAt - appliedAt,
  };
}

/**
 * When each stage of the fleet's policies happened, in seconds since creation began (p50 and max over the
 * policies): the plan computed, its SQL started, committed, and the policy's `Ready` written. Shows which
 * stage a fleet queues in (planning, or execution).
 */
function fleetTimeline(wallStart: number, listed: Listed): Record<string, { p50: number; max: number }> {
  const at = (iso: string | null | undefined): number => (iso ? (Date.parse(iso) - wallStart) / 1000 : NaN);
  const stages: Record<string, number[]> = { computed: [], applying: [], committed: [], ready: [] };
  for (const policy of listed.policies.filter((p) => p.metadata.name!.startsWith('fleet-'))) {
    const plan = listed.plans.find(
      (q) => q.status?.phase === 'Applied' && q.metadata.ownerReferences?.[0]?.uid === policy.metadata.uid,
    );
    const ready = (policy.status?.conditions ?? []).find((c) => c.type === 'Ready') as
      { last_transition_time?: string } | undefined;
    const values = {
      computed: at(plan?.status?.computedAt),
      applying: at(plan?.status?.applyingSince),
      committed: at(plan?.status?.appliedAt),
      ready: at(ready?.last_transition_time),
    };
    for (const [stage, value] of Object.entries(values))
      if (Number.isFinite(value)) stages[stage]!.push(value);
  }
  return Object.fromEntries(
    Object.entries(stages).map(([stage, v]) => [
      stage,
      { p50: round(percentile(v, 50)), max: round(v.length === 0 ? NaN : Math.max(...v)) },
    ]),
  );
}

/** One fleet run: all policies created at once; seconds until all are Ready with an Applied plan. */
async function fleetRun(
  product: ProductProcesses,
  dbs: FleetDatabases,
  count: number,
  prefix: string,
): Promise<{
  seconds: number;
  sqlByDatabase: Map<number, string>;
  timeline: Record<string, { p50: number; max: number }>;
}> {
  const kc = product.emulator.kubeConfig(NAMESPACE);
  const resources = new PolicyResources(kc, NAMESPACE);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const wallStart = Date.now();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      resources.createPolicy(`fleet-${i}`, smallPolicy(`${prefix}p${i}_`, dbs.names[i]!, `db-${i}`)),
    ),
  );
  let listed: Listed;
  for (;;) {
    listed = await listAll(custom);
    const applied = new Set(
      listed.plans
        .filter((p) => p.status?.phase === 'Applied')
        .flatMap((p) => (p.metadata.ownerReferences ?? []).map((o) => o.uid)),
    );
    const done = listed.policies.filter(
      (p) => p.metadata.name!.startsWith('fleet-') && isReady(p) && applied.has(p.metadata.uid!),
    ).length;
    if (done === count) break;
    if (process.env['FLEET_DEBUG'] && performance.now() - started > 20_000) {
      const stuck = listed.policies.filter((p) => !(isReady(p) && applied.has(p.metadata.uid!))).slice(0, 2);
      for (const p of stuck) {
        const plans = listed.plans.filter((q) => q.metadata.ownerReferences?.[0]?.uid === p.metadata.uid);
        console.log(
          p.metadata.name,
          JSON.stringify(p.status?.conditions),
          JSON.stringify(plans.map((q) => [q.metadata.name, q.status?.phase, q.status?.conditions])),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10_000));
    }
    if (performance.now() - started > 30 * 60_000)
      throw new Error(`only ${done} of ${count} converged in 30 min`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const seconds = (performance.now() - started) / 1000;
  const uidToIndex = new Map(
    listed.policies
      .filter((p) => p.metadata.name!.startsWith('fleet-'))
      .map((p) => [p.metadata.uid!, Number(p.metadata.name!.slice('fleet-'.length))]),
  );
  const sqlByDatabase = new Map<number, string>();
  for (const plan of listed.plans) {
    if (plan.status?.phase !== 'Applied' || typeof plan.status.sqlInline !== 'string') continue;
    const index = uidToIndex.get(plan.metadata.ownerReferences?.[0]?.uid ?? '');
    if (index !== undefined) sqlByDatabase.set(index, plan.status.sqlInline);
  }
  return { seconds, sqlByDatabase, timeline: fleetTimeline(wallStart, listed) };
}

/** CPU seconds so far of each service, PostgreSQL, and this process (the API emulator and the polling). */
/** Milliseconds of CPU the services spent per policy in a stage (PostgreSQL and the bench left out). */
function serviceCpuMsPerPolicy(delta: Record<string, number>, policies: number): number {
  const services = Object.entries(delta).filter(([name]) => name !== 'postgres' && !name.startsWith('bench'));
  return round((services.reduce((sum, [, seconds]) => sum + seconds, 0) * 1000) / policies);
}

function stageCpu(product: ProductProcesses): Record<string, number> {
  return {
    ...product.cpuSeconds(),
    postgres: postgresCpu(),
    'bench (API emulator)': benchCpuSeconds().own,
  };
}

/** CPU seconds so far of this process (its libs/catalog sessions) and PostgreSQL, for the read-then-apply floor. */
function stageCpuOfFloor(): Record<string, number> {
  return { 'bench (libs/catalog)': benchCpuSeconds().own, postgres: postgresCpu() };
}

/** The managed scope of a fleet policy, as the planner derives it. */
function scopeOf(policy: Record<string, unknown>): ManagedScope {
  const expansion = expandPolicy(policy as unknown as PolicyContent, { policyName: 'fleet' });
  if (!expansion.ok) throw new Error('the fleet policy does not expand');
  return deriveManagedScope(expansion.desired);
}

/** CPU seconds so far of the floor's psql processes (exited children of this process) and PostgreSQL. */
function floorStageCpu(): Record<string, number> {
  return { psql: benchCpuSeconds().children, postgres: postgresCpu() };
}

function withTotal(delta: Record<string, number>): Record<string, number> {
  const total = Object.values(delta).reduce((a, b) => a + b, 0);
  return { ...delta, total: Math.round(total * 10) / 10 };
}

/** The floor: `psql -1 -f` of each database's SQL, `concurrency` processes at a time. */
async function psqlFloor(
  dbs: FleetDatabases,
  sqlByDatabase: ReadonlyMap<number, string>,
  fromPrefix: string,
  toPrefix: string,
  concurrency: number,
): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rp-fleet-floor-'));
  const jobs = [...sqlByDatabase].map(([index, sql]) => {
    const file = path.join(dir, `${index}.sql`);
    writeFileSync(file, sql.replaceAll(fromPrefix, toPrefix));
    return { url: dbs.url(index), file };
  });
  const run = (job: { url: string; file: string }): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-1', '-f', job.file, job.url], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`psql failed: ${err.slice(0, 300)}`)),
      );
    });
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) await run(jobs[next++]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  rmSync(dir, { recursive: true, force: true });
  return seconds;
}

/** Runs the fleet benchmark. */
export async function runFleetBench(_script: string, args: readonly string[]): Promise<void> {
  const options = parse(args);
  if (!Number.isInteger(options.servers) || options.servers < 0)
    throw new Error('--servers needs a whole number (0: the bench server)');
  // --servers N: N real servers side by side, each from the pinned package, started (about 1-2 s each) and
  // stopped by this process; only their processes count as PostgreSQL CPU.
  const servers: EmbeddedPostgres[] = await Promise.all(
    Array.from({ length: options.servers }, () => startEmbeddedPostgresServer(SERVERS_MAJOR)),
  );
  const stopServers = (): Promise<unknown> => Promise.allSettled(servers.map((server) => server.stop()));
  if (servers.length > 0) {
    const postmasters = servers.map((server) => postmasterPid(server.dataDir));
    postgresCpu = () => postgresCpuSeconds(postmasters);
  }
  const dbs = new FleetDatabases(servers.length > 0 ? servers.map((server) => server.adminUrl) : undefined);
  const onSignal = (): void =>
    void dbs
      .dispose()
      .then(stopServers)
      .finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  const report: Record<string, unknown> = {
    benchmark: 'fleet',
    description:
      'N databases, one small policy each (2 profiles x 2 schemas, 2 roles, memberships, CONNECT grants), created at once; ' +
      'seconds until every policy is Ready=True/Reconciled with an Applied plan, per executor replica count ' +
      '(each EXECUTOR_CONCURRENCY slots). Services are separate Node processes (inspector, executors, planner, ' +
      'k8s-gateway; the access-scheduler is not on this path), the API emulator runs in the bench process. Floor: the ' +
      "same plans' SQL (role prefix renamed) by a pool of `psql -X -1 -f` processes with concurrency = executors x slots.",
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      loadAverage1mAtStart: round(os.loadavg()[0]!),
    },
    node: process.version,
    databases: options.databases,
    executorConcurrency: options.concurrency,
    tracing: options.tracing,
    // Servers the databases spread over (0: the bench server alone, shared with whatever else runs on it).
    servers:
      servers.length === 0
        ? { count: 0 }
        : { count: servers.length, major: SERVERS_MAJOR, maxConnections: 200, embedded: true },
    measuredAt: new Date().toISOString(),
  };
  // --tracing: every service exports its spans (OTLP/HTTP JSON, the SDK's batch processor) to this process,
  // which only counts them: the receiver's parsing is the collector's work, not the product's.
  // It keeps only the spans the single policy's hops are read from (trace-hops.ts), until they are read.
  let spansReceived = 0;
  let traceHops: TraceHops | undefined = options.tracing ? new TraceHops() : undefined;
  const traces = options.tracing
    ? await OtlpReceiver.start({
        retain: false,
        onSpans: (spans) => {
          spansReceived += spans.length;
          traceHops?.collect(spans);
        },
      })
    : undefined;
  let hopsDisagree: string[] = [];
  try {
    const extra = options.latencyRuns > 0 ? options.latencyRuns + 1 : 0;
    let started = performance.now();
    await dbs.create(options.databases + extra);
    console.log(`${options.databases + extra} databases in ${round((performance.now() - started) / 1000)} s`);
    const seconds: Record<string, number> = {};
    const rss: Record<string, Record<string, number>> = {};
    const timelines: Record<string, Record<string, { p50: number; max: number }>> = {};
    const cpu: Record<string, Record<string, number>> = {};
    const floorCpu: Record<string, Record<string, number>> = {};
    const perPolicy: Record<string, Record<string, number>> = {};
    const serviceCpuMs: Record<string, number> = {};
    const breakdown: Record<string, Record<string, Record<string, number>>> = {};
    const slowStages: Record<string, string> = {};
    const apiWrites: Record<string, Record<string, number>> = {};
    const failures: Record<string, readonly FailureCount[]> = {};
    const peakSessions: Record<string, number[]> = {};
    const spineFloors: Record<string, SpineFloor> = {};
    const spineFloorErrors: Record<string, string> = {};
    const overSpineFloor: Record<string, number | null> = {};
    const idleRates: Record<string, Record<string, number>> = {};
    const idlePerPolicy: Record<string, number> = {};
    // PostgreSQL's work by statement, where the bench server records it (pg-statements.ts).
    const recordStatements = await statementsAvailable();
    const statements: Record<string, StageStatements> = {};
    const floorStatements: Record<string, StageStatements> = {};
    const floorPerPolicy: Record<string, Record<string, number>> = {};
    // Every service's log is kept (issue 28): a run that falls into the slow mode must say why.
    const logRoot =
      process.env['BENCH_LOG_DIR'] ?? mkdtempSync(path.join(os.tmpdir(), 'rolepolicy-fleet-logs-'));
    console.log(`service logs: ${logRoot}`);
    let sqlOfFirst: Map<number, string> | undefined;
    let firstPrefix = '';
    for (const [stage, executors] of options.executors.entries()) {
      if (stage > 0) await dbs.reset();
      const prefix = `${dbs.rolePrefix}e${executors}_`;
      const stageLogs = path.join(logRoot, `executors-${executors}`);
      let stageShape: StageShape | undefined;
      mkdirSync(stageLogs, { recursive: true });
      const product = await startProductProcesses({
        executors,
        namespace: NAMESPACE,
        env: {
          EXECUTOR_CONCURRENCY: String(options.concurrency),
          INSPECT_MAX_TARGET_POOLS: '8',
          ...(traces ? traces.env() : {}),
        },
        logDir: stageLogs,
      });
      try {
        const all = Array.from({ length: options.databases + extra }, (_, i) => i);
        await dbs.createSecrets(
          product.emulator.kubeConfig(NAMESPACE).makeApiClient(CoreV1Api),
          NAMESPACE,
          all,
        );
        if (sqlOfFirst === undefined && extra > 0) {
          // API writes of single policies on a product otherwise idle (the warm-up run included).
          const latencyWrites = new ApiWriteCounter();
          product.emulator.setRequestHook(latencyWrites.hook);
          const latency = await singlePolicyLatency(
            product,
            dbs,
            options.databases,
            options.latencyRuns,
            prefix,
          );
          product.emulator.setRequestHook(undefined);
          report['singlePolicyApiWrites'] = writesPerPolicy(
            new Map(),
            latencyWrites.snapshot(),
            options.latencyRuns + 1,
          );
          console.log(`single policy API writes: ${JSON.stringify(report['singlePolicyApiWrites'])}`);
          const stat = (v: number[]) => ({ p50: round(percentile(v, 50)), p95: round(percentile(v, 95)) });
          report['singlePolicyLatencyMs'] = stat(latency.applied);
          report['singlePolicyReadyMs'] = stat(latency.ready);
          report['singlePolicySamplesMs'] = latency.applied.map(round);
          report['singlePolicyHopsMs'] = Object.fromEntries(
            Object.keys(latency.hops[0] ?? {}).map((hop) => [
              hop,
              stat(latency.hops.map((h) => h[hop]!).filter((v) => Number.isFinite(v))),
            ]),
          );
          console.log(`hops: ${JSON.stringify(report['singlePolicyHopsMs'])}`);
          if (traceHops !== undefined) {
            // The same hops from each run's trace, and how far they are from the status times' (docs/tracing.md).
            const fromTrace = await traceHops.waitForHops(NAMESPACE, latency.names, 30_000);
            traceHops = undefined;
            report['singlePolicyHopsFromTraceMs'] = Object.fromEntries(
              TRACE_HOPS.map((hop) => [
                hop,
                stat(fromTrace.map((h) => h?.[hop] ?? NaN).filter((v) => Number.isFinite(v))),
              ]),
            );
            const differences = hopDifferences(latency.hops, fromTrace);
            report['singlePolicyHopsTraceDifferenceMs'] = differences;
            hopsDisagree = disagreeingHops(differences);
            console.log(`hops from the trace: ${JSON.stringify(report['singlePolicyHopsFromTraceMs'])}`);
            console.log(`  largest difference to the status times: ${JSON.stringify(differences)}`);
          }
          report['singlePolicyTrace'] = latency.trace;
          if (process.env['FLEET_DEBUG']) console.log(latency.trace.join('\n'));
          console.log(`single policy: Applied ${JSON.stringify(report['singlePolicyLatencyMs'])} ms`);
        }
        if (options.idleSeconds > 0) {
          // The stack up and ready, nothing changing: what the services cost by the clock alone.
          idleRates[String(executors)] = await idleBaseline(product, options.idleSeconds);
        }
        started = performance.now();
        const cpuBefore = stageCpu(product);
        const activityBefore = await dbs.activity(options.databases);
        const counters = [
          'rp_inspect_requests_total',
          'rp_messages_handled_total',
          'rp_messages_failed_total',
          'rp_planner_applied_snapshot_verifications_total',
        ];
        const countersBefore = await Promise.all(counters.map((name) => counterTotal(product, name)));
        const breakdowns = [
          ['rp_inspect_requests_total', 'outcome'],
          ['rp_planner_reconcile_seconds_count', 'decision'],
          ['rp_messages_handled_total', 'subject'],
          // The pass after each Applied result: verified from the executor's snapshot, or why it inspected.
          ['rp_planner_applied_snapshot_unused_total', 'reason'],
        ] as const;
        const breakdownsBefore = await Promise.all(breakdowns.map(([n, l]) => byLabel(product, n, l)));
        const maintenanceBefore = recordStatements ? await resetStatements() : 0;
        const writes = new ApiWriteCounter();
        product.emulator.setRequestHook(writes.hook);
        const recording = options.spineFloor ? await StageRecording.start(product) : undefined;
        const sampler = dbs.sampleSessions();
        const run = await fleetRun(product, dbs, options.databases, prefix).finally(async () => {
          peakSessions[String(executors)] = await sampler.stop();
        });
        product.emulator.setRequestHook(undefined);
        console.log(`  peak client sessions per server: ${JSON.stringify(peakSessions[String(executors)])}`);
        // The bench's own creates (`POST postgrespolicies`, one per policy) count as well: they are the user's.
        apiWrites[String(executors)] = writesPerPolicy(new Map(), writes.snapshot(), options.databases);
        console.log(`  API writes per policy: ${JSON.stringify(apiWrites[String(executors)])}`);
        const stageDelta = cpuDelta(cpuBefore, stageCpu(product));
        serviceCpuMs[String(executors)] = serviceCpuMsPerPolicy(stageDelta, options.databases);
        cpu[String(executors)] = withTotal(stageDelta);
        console.log(`  services' CPU per policy: ${serviceCpuMs[String(executors)]} ms`);
        // By process at once, so a run stopped before its floors still says where the CPU went.
        console.log(`  CPU seconds by process: ${JSON.stringify(cpu[String(executors)])}`);
        const activity = await dbs.activity(options.databases);
        if (recordStatements) {
          const names = dbs.names.slice(0, options.databases);
          statements[String(executors)] = await stageStatements(names, options.databases, maintenanceBefore);
          console.log(`  PostgreSQL statements per policy: ${JSON.stringify(statements[String(executors)])}`);
        }
        const countersAfter = await Promise.all(counters.map((name) => counterTotal(product, name)));
        const breakdownsAfter = await Promise.all(breakdowns.map(([n, l]) => byLabel(product, n, l)));
        stageShape = await recording?.finish(product, NAMESPACE, {
          executors,
          policies: options.databases,
          handled: grownTotals(breakdownsBefore[2]!, breakdownsAfter[2]!),
          apiWrites: writes.snapshot(),
        });
        const grown = (i: number) =>
          grownPerPolicy(breakdownsBefore[i]!, breakdownsAfter[i]!, options.databases);
        const perDatabase = (i: number) =>
          round((countersAfter[i]! - countersBefore[i]!) / options.databases);
        perPolicy[String(executors)] = {
          sessions: round((activity.sessions - activityBefore.sessions) / options.databases),
          // Sessions on the servers' `postgres` database (the executors' role lock, ADR 0027).
          roleLockSessions: round(
            (activity.roleLockSessions - activityBefore.roleLockSessions) / options.databases,
          ),
          transactions: round((activity.transactions - activityBefore.transactions) / options.databases),
          inspections: perDatabase(0),
          // JetStream messages handled, and handler failures nak-ed for redelivery (retries show here).
          messagesHandled: perDatabase(1),
          messagesRetried: perDatabase(2),
        };
        // What the inspections answered (inline, object, unchanged = fingerprint only, ...) and the planner's
        // passes by decision: where a fleet under overload repeats work.
        breakdown[String(executors)] = {
          inspections: grown(0),
          passes: grown(1),
          messages: grown(2),
          afterApply: { ...grown(3), verified: perDatabase(3) },
        };
        console.log(`  breakdown per policy: ${JSON.stringify(breakdown[String(executors)])}`);
        console.log(`  per policy: ${JSON.stringify(perPolicy[String(executors)])}`);
        seconds[String(executors)] = round(run.seconds);
        timelines[String(executors)] = run.timeline;
        rss[String(executors)] = product.peakRssMiB();
        console.log(
          `${executors} executor(s): ${round(run.seconds)} s, peak RSS ${JSON.stringify(rss[String(executors)])}`,
        );
        console.log(`  stages (s since creation): ${JSON.stringify(run.timeline)}`);
        if (idleRates[String(executors)] !== undefined) {
          const idle = idleShare(idleRates[String(executors)]!, run.seconds, options.databases);
          idlePerPolicy[String(executors)] = idle.perPolicy;
          console.log(idle.line);
        }
        const slow = slowModeOf(perPolicy[String(executors)]!, breakdown[String(executors)]!);
        if (slow !== null) slowStages[String(executors)] = slow;
        if (options.steady && stage === options.executors.length - 1) {
          // What the converged fleet costs per interval: a no-op reconcile of every policy, and its floor.
          const names = Array.from({ length: options.databases }, (_, i) => `fleet-${i}`);
          const scopes = names.map((_, i) =>
            scopeOf(smallPolicy(`${prefix}p${i}_`, dbs.names[i]!, `db-${i}`)),
          );
          const wave = await steadyWave(
            product,
            dbs,
            NAMESPACE,
            names,
            scopes,
            STEADY_FLOOR_CONCURRENCY,
            postgresCpu,
          );
          report['steadyWave'] = { executors, ...wave };
          console.log(`  steady wave (a no-op reconcile per policy): ${JSON.stringify(wave)}`);
        }
        if (sqlOfFirst === undefined) {
          sqlOfFirst = run.sqlByDatabase;
          firstPrefix = prefix;
        }
      } finally {
        await product.stop();
      }
      if (stageShape !== undefined) {
        // After the product stopped, so nothing else runs beside the floor's processes. A floor that fails is
        // reported, and the stage's own figures are kept.
        try {
          const spine = await measureSpineFloor(stageShape, serviceCpuMs[String(executors)]);
          spineFloors[String(executors)] = spine.floor;
          overSpineFloor[String(executors)] = spine.over;
          console.log(spine.line);
        } catch (error) {
          spineFloorErrors[String(executors)] = (error as Error).message;
          console.log(`  spine floor failed: ${(error as Error).message}`);
        }
      }
      const reasons = failureReasons(stageLogs);
      failures[String(executors)] = reasons;
      if (reasons.length > 0)
        console.log(`  most frequent failures (logs in ${stageLogs}):\n${formatReasons(reasons)}`);
    }
    const floor: Record<string, number> = {};
    for (const executors of options.executors) {
      await dbs.reset();
      const concurrency = executors * options.concurrency;
      const cpuBefore = floorStageCpu();
      floor[String(executors)] = round(
        await psqlFloor(dbs, sqlOfFirst!, firstPrefix, `${dbs.rolePrefix}f${executors}_`, concurrency),
      );
      floorCpu[String(executors)] = withTotal(cpuDelta(cpuBefore, floorStageCpu()));
      console.log(`floor, ${concurrency} psql at once: ${floor[String(executors)]} s`);
    }
    // The second floor: the same SQL behind the two reads the product's design makes (read-apply-floor.ts).
    const readFloor: Record<string, number> = {};
    const readFloorCpu: Record<string, Record<string, number>> = {};
    for (const executors of options.executors) {
      await dbs.reset();
      const concurrency = executors * options.concurrency;
      const prefix = `${dbs.rolePrefix}r${executors}_`;
      const jobs: ReadApplyJob[] = [...sqlOfFirst!].map(([index, sql]) => ({
        url: dbs.url(index),
        scope: scopeOf(smallPolicy(`${prefix}p${index}_`, dbs.names[index]!, `db-${index}`)),
        sql: sql.replaceAll(firstPrefix, prefix),
      }));
      const activityBefore = await dbs.activity(options.databases);
      const maintenanceBefore = recordStatements ? await resetStatements() : 0;
      const cpuBefore = stageCpuOfFloor();
      readFloor[String(executors)] = round(await readApplyFloor(jobs, concurrency));
      readFloorCpu[String(executors)] = withTotal(cpuDelta(cpuBefore, stageCpuOfFloor()));
      const activity = await dbs.activity(options.databases);
      floorPerPolicy[String(executors)] = {
        sessions: round((activity.sessions - activityBefore.sessions) / options.databases),
        transactions: round((activity.transactions - activityBefore.transactions) / options.databases),
      };
      if (recordStatements) {
        const names = dbs.names.slice(0, options.databases);
        floorStatements[String(executors)] = await stageStatements(
          names,
          options.databases,
          maintenanceBefore,
        );
        console.log(`  floor's statements per policy: ${JSON.stringify(floorStatements[String(executors)])}`);
      }
      console.log(`read-then-apply floor, ${concurrency} at once: ${readFloor[String(executors)]} s`);
    }
    const ratio = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? null : Math.round((a / b) * 100) / 100;
    Object.assign(report, {
      seconds,
      timelineSeconds: timelines,
      floorSeconds: floor['2'] ?? floor[String(options.executors[0])],
      floorSecondsByExecutors: floor,
      floorSpeedup2: ratio(floor['1'], floor['2']),
      speedup2: ratio(seconds['1'], seconds['2']),
      speedup4: ratio(seconds['1'], seconds['4']),
      fleetOverFloor2: ratio(seconds['2'], floor['2']),
      // Inspect, then lock + inspect + apply, per database, straight on PostgreSQL (no control plane).
      readApplyFloorSeconds: readFloor,
      readApplyFloorCpuSeconds: readFloorCpu,
      // Sessions and transactions per policy in the floor's databases (compare perPolicy).
      readApplyFloorPerPolicy: floorPerPolicy,
      // PostgreSQL's statements per policy (pg_stat_statements; only where the bench server records them).
      ...(recordStatements
        ? { postgresStatements: statements, readApplyFloorStatements: floorStatements }
        : {}),
      // PostgreSQL CPU per policy against the read-then-apply floor's, by executor count (issue 28: <= 1.1x).
      postgresOverReadApplyFloor: Object.fromEntries(
        Object.keys(cpu).map((k) => [k, ratio(cpu[k]?.['postgres'], readFloorCpu[k]?.['postgres'])]),
      ),
      fleetOverReadApplyFloor2: ratio(seconds['2'], readFloor['2']),
      statementsPerDatabase: Math.round(
        [...sqlOfFirst!.values()].reduce((n, s) => n + s.split(';\n').length, 0) /
          Math.max(1, sqlOfFirst!.size),
      ),
      peakRssMiB: rss,
      // Per policy: database sessions and transactions in the fleet's databases, inspections, and JetStream
      // messages handled and retried by all services.
      perPolicy,
      perPolicyBreakdown: breakdown,
      cpuSeconds: cpu,
      // CPU of the product's services (not PostgreSQL, not the bench) per policy, by executor count: compare a
      // run with --tracing against one without to get the cost of tracing.
      serviceCpuMsPerPolicy: serviceCpuMs,
      // The same transport work per policy with no product logic (spine-floor.ts), by executor count: its CPU
      // per policy split into messaging, cache deliveries and API writes, and the services' CPU over it.
      spineFloorCpuMsPerPolicy: Object.fromEntries(
        Object.entries(spineFloors).map(([k, floor]) => [k, floor.cpuMsPerPolicy]),
      ),
      serviceCpuOverSpineFloor: overSpineFloor,
      spineFloor: spineFloors,
      ...(Object.keys(spineFloorErrors).length > 0 ? { spineFloorErrors } : {}),
      // Each service's CPU while idle before the stage (ms per second), and what that rate comes to per
      // policy over the stage's wall time (idle-baseline.ts).
      idleWindowSeconds: options.idleSeconds,
      idleCpuMsPerSecond: idleRates,
      idleCpuMsPerPolicy: idlePerPolicy,
      ...(traces ? { spansReceived, spansPerPolicy: round(spansReceived / options.databases) } : {}),
      floorCpuSeconds: floorCpu,
      // The least wall time the same CPU work could take on this machine's cores, and its ratio to the floor.
      cpuBoundSeconds: Object.fromEntries(
        Object.entries(cpu).map(([k, c]) => [k, round(c['total']! / os.cpus().length)]),
      ),
      cpuOverFloorCpu2: ratio(cpu['2']?.['total'], floorCpu['2']?.['total']),
      // Stages that repeated work (more than 1.2 inspections per policy, or a failed pass), and the most
      // frequent failures each stage's services logged.
      slowMode: slowStages,
      // API server writes per policy by verb and resource (Events included), the issue-28 goal is 5.
      apiWritesPerPolicy: apiWrites,
      failureReasons: failures,
      // The most client sessions each server had at once during each fleet stage (sampled every 0.5 s).
      peakSessionsPerServer: peakSessions,
      logDir: logRoot,
    });
    // Written before the databases are dropped (slow with hundreds of them).
    console.log(JSON.stringify(report, null, 2));
    writeResult(
      servers.length > 0 ? `fleet-servers-${servers.length}` : options.tracing ? 'fleet-tracing' : 'fleet',
      report,
    );
    if (hopsDisagree.length > 0) {
      throw new Error(`the trace and the status times disagree: ${hopsDisagree.join(', ')} (max 1 ms)`);
    }
    if (Object.keys(slowStages).length > 0) {
      throw new Error(
        `the fleet fell into the slow mode: ${Object.entries(slowStages)
          .map(([executors, why]) => `${executors} executor(s): ${why}`)
          .join('; ')} (logs in ${logRoot})`,
      );
    }
  } finally {
    process.off('SIGINT', onSignal);
    await traces?.stop();
    await dbs.dispose();
    await stopServers();
  }
}
