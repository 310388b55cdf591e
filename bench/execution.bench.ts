// `npm run bench -- execution`: the executor's CPU per execution of the fleet's small policy on fresh real
// databases, against a floor measured in the same run. The executor runs as its own process from dist/ with
// the production wiring (resource cache, sealed Secret reads, status commands, results, post-apply
// snapshot); this process plays the gateway and the planner (it plans each request before measuring). The
// floor does in this process, on other fresh databases of the same template, what any design that reads,
// applies and reads back must do, with libs/catalog straight on the database: a session with the executor's
// settings, the advisory lock, the scope's inspection, the plan's statements in one transaction under the
// server's role lock (ADR 0027), the post-apply read with its fingerprint. Options: --databases N (per
// round, default 100), --rounds R (default 3), --concurrency C (executor slots and floor workers, default 4),
// --out NAME (bench/results/NAME.json, default execution).
import {
  executeUnderLock,
  inspect,
  inspectUnlessUnchanged,
  maintenanceLock,
  openConnection,
  openMaintenanceConnection,
} from '@rolepolicy/catalog';
import {
  SUBJECTS,
  encodePayload,
  executeRequestContract,
  type ExecuteRequestV2,
} from '@rolepolicy/contracts';
import { CONTENT_FIELDS, renderSql, type ManagedScope } from '@rolepolicy/policy';
import { jetstream } from '@nats-io/jetstream';
import { withPlannerApproval } from '@rolepolicy/testing';

import { expandRequest, replan } from '../apps/executor/src/execution/replan.js';
import { ExecutionCluster, syscalls, type Syscalls } from './execution-cluster.js';
import { FleetDatabases } from './fleet-databases.js';
import { smallPolicy } from './fleet-policy.js';
import { databaseUrl, median, round, writeResult } from './pg-bench-support.js';

const NAMESPACE = 'bench';
const WARMUP = 40;

/** What one stage used: CPU seconds and system calls. */
interface Used {
  readonly cpuSeconds: number;
  readonly syscalls: Syscalls;
}

const minus = (a: Syscalls, b: Syscalls): Syscalls => ({
  reads: a.reads - b.reads,
  writes: a.writes - b.writes,
});

/** One database's execution, planned by this process before the measurement. */
interface Job {
  readonly url: string;
  readonly request: ExecuteRequestV2;
  readonly spec: Record<string, unknown>;
  readonly scope: ManagedScope;
  readonly statements: readonly string[];
}

function option(args: readonly string[], flag: string, fallback: number): number {
  const at = args.indexOf(flag);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} needs a positive integer`);
  return value;
}

/** Plans database `index` as the planner would: request, approved digest, rendered statements. */
async function planJob(dbs: FleetDatabases, index: number): Promise<Job> {
  const database = dbs.names[index]!;
  const url = databaseUrl(database);
  const name = `p${index}`;
  const spec = smallPolicy(`${dbs.rolePrefix}${index}_`, database, `${name}-conn`);
  const content = Object.fromEntries(CONTENT_FIELDS.flatMap((f) => (f in spec ? [[f, spec[f]]] : [])));
  const draft: ExecuteRequestV2 = {
    v: 2,
    plan: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicyPlan', namespace: NAMESPACE, name },
    policy: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      namespace: NAMESPACE,
      name,
      uid: `uid-${name}`,
    },
    changeDigest: 'pending',
    changeDigestEncoding: 'pending',
    idempotencyKey: `uid-${name}/${name}`,
    target: `${NAMESPACE}/${name}-conn/DATABASE_URL`,
    content,
    mode: 'authoritative',
    allowSchemaOwnerTransfers: false,
    requirePhysicalIdentity: false,
    approvedIdentity: { physical: null, logical: null },
    passwordSources: {},
    appliedPasswordSourceVersions: {},
  };
  const expanded = expandRequest(draft);
  if (!expanded.ok) throw new Error(expanded.message);
  const connection = openConnection({ url, maxConnections: 1 });
  try {
    const snapshot = await inspect(connection.db, expanded.scope, connection.target);
    const { plan, digest } = replan(draft, expanded, snapshot);
    const rendered = renderSql(plan.changes, {
      serverVersionNum: snapshot.server_version_num,
      inventory: snapshot.inventory,
      passwords: {},
      executorRole: snapshot.executor.role,
    });
    const request = withPlannerApproval(draft, digest, snapshot);
    return { url, request, spec, scope: expanded.scope, statements: rendered.statements.map((s) => s.sql) };
  } finally {
    await connection.close();
  }
}

/** Publishes the Secret, policy and plan of every job, as the gateway would have before the request. */
async function publishCluster(cluster: ExecutionCluster, jobs: readonly Job[]): Promise<void> {
  for (const { url, request, spec } of jobs) {
    const name = request.policy.name;
    await cluster.publishSecret(NAMESPACE, `${name}-conn`, url);
    await cluster.publishPolicy(NAMESPACE, name, request.policy.uid!, spec);
    await cluster.publishPlan(NAMESPACE, request.plan.name, name, {
      digest: request.changeDigest,
      encoding: request.changeDigestEncoding,
      physical: request.approvedIdentity.physical,
      logical: request.approvedIdentity.logical,
    });
  }
}

/** Sends every job's request at once and waits for each final result; returns what the executor used. */
async function executeAll(cluster: ExecutionCluster, jobs: readonly Job[]): Promise<Used> {
  const pending = new Set(jobs.map((j) => j.request.plan.name));
  const failures: string[] = [];
  const sub = cluster.nc.subscribe(SUBJECTS.executeResult);
  const done = (async () => {
    for await (const m of sub) {
      const result = m.json<{ plan: { name: string }; phase: string; reason: string; message: string }>();
      if (result.phase === 'Applying' || !pending.has(result.plan.name)) continue;
      pending.delete(result.plan.name);
      if (result.phase !== 'Applied' || result.reason !== 'Executed') {
        failures.push(`${result.plan.name}: ${result.phase}/${result.reason} ${result.message}`);
      }
      if (pending.size === 0) break;
    }
  })();
  const js = jetstream(cluster.nc);
  const before = cluster.executorCpuSeconds();
  const callsBefore = cluster.executorSyscalls();
  const contract = { ...executeRequestContract, subject: SUBJECTS.executeRequest };
  for (const { request } of jobs) {
    await js.publish(SUBJECTS.executeRequest, encodePayload(contract, request));
  }
  const timeout = setTimeout(() => sub.unsubscribe(), 30_000 + jobs.length * 500);
  await done;
  clearTimeout(timeout);
  const used = {
    cpuSeconds: cluster.executorCpuSeconds() - before,
    syscalls: minus(cluster.executorSyscalls(), callsBefore),
  };
  sub.unsubscribe();
  if (pending.size > 0) throw new Error(`${pending.size} executions without a result`);
  if (failures.length > 0) throw new Error(`executions not applied: ${failures.slice(0, 3).join('; ')}`);
  return used;
}

/**
 * The floor for one job: the same session, lock, reads, statements and read-back, and the server's role lock
 * for the plan's role DDL (ADR 0027: a session on the maintenance database), nothing else.
 */
async function floorJob(job: Job): Promise<void> {
  const spec = { url: job.url, maxConnections: 2, applicationName: 'rolepolicy-executor' };
  const connection = openConnection(spec);
  const maintenance = openMaintenanceConnection(spec, 'postgres', {});
  const roleLock = maintenanceLock(maintenance, () => undefined);
  try {
    await executeUnderLock(
      connection.db,
      async (session) => {
        await inspect(session, job.scope, connection.target);
        return {
          run: true,
          statements: job.statements.map((sql) => ({ sql, redacted: sql })),
          result: undefined,
          afterCommit: async (after) => {
            await inspectUnlessUnchanged(after, job.scope, connection.target);
          },
        };
      },
      roleLock,
    );
  } finally {
    await connection.close();
    await maintenance.close();
  }
}

/** What this process used to run every floor job, `concurrency` at a time. */
async function floorCpu(jobs: readonly Job[], concurrency: number): Promise<Used> {
  const start = process.cpuUsage();
  const callsBefore = syscalls('self');
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) await floorJob(jobs[next++]!);
    }),
  );
  const used = process.cpuUsage(start);
  return { cpuSeconds: (used.user + used.system) / 1e6, syscalls: minus(syscalls('self'), callsBefore) };
}

/** Runs the execution benchmark. */
export async function runExecutionBench(_script: string, args: readonly string[] = []): Promise<void> {
  const perRound = option(args, '--databases', 100);
  const rounds = option(args, '--rounds', 3);
  const concurrency = option(args, '--concurrency', 4);
  const dbs = new FleetDatabases();
  const cluster = await ExecutionCluster.start();
  try {
    const total = WARMUP * 2 + rounds * perRound * 2;
    console.log(`creating ${total} databases`);
    await dbs.create(total);
    const jobs: Job[] = [];
    for (let i = 0; i < total; i++) jobs.push(await planJob(dbs, i));
    await cluster.startExecutor(concurrency);
    const [warmProduct, warmFloor] = [jobs.slice(0, WARMUP), jobs.slice(WARMUP, WARMUP * 2)];
    await publishCluster(
      cluster,
      jobs.filter((_, i) => i < WARMUP || i >= WARMUP * 2),
    );
    await executeAll(cluster, warmProduct);
    await floorCpu(warmFloor, concurrency);
    const executorMs: number[] = [];
    const floorMs: number[] = [];
    const perExecution = (used: Used) => ({
      cpuMs: (used.cpuSeconds * 1000) / perRound,
      reads: used.syscalls.reads / perRound,
      writes: used.syscalls.writes / perRound,
    });
    let executorCalls = { reads: 0, writes: 0 };
    let floorCalls = { reads: 0, writes: 0 };
    for (let r = 0; r < rounds; r++) {
      const base = WARMUP * 2 + r * perRound * 2;
      const product = jobs.slice(base, base + perRound);
      const floor = jobs.slice(base + perRound, base + perRound * 2);
      const executed = perExecution(await executeAll(cluster, product));
      const floored = perExecution(await floorCpu(floor, concurrency));
      executorMs.push(executed.cpuMs);
      floorMs.push(floored.cpuMs);
      executorCalls = { reads: round(executed.reads), writes: round(executed.writes) };
      floorCalls = { reads: round(floored.reads), writes: round(floored.writes) };
      console.log(`round ${r + 1}: executor ${round(executorMs[r]!)} ms, floor ${round(floorMs[r]!)} ms`);
    }
    const executor = median(executorMs);
    const floor = median(floorMs);
    const report = {
      benchmark: 'execution',
      description:
        "CPU milliseconds of the executor process per execution of the fleet's small policy (fresh database, " +
        'production cluster wiring, ~16 statements, post-apply snapshot) against the floor: the same session ' +
        'settings, advisory lock, inspection, statements under the role lock and post-apply read through ' +
        'libs/catalog in the bench process. Median of the rounds.',
      node: process.version,
      databasesPerRound: perRound,
      rounds,
      concurrency,
      statementsPerExecution: jobs[0]!.statements.length,
      executorCpuMsPerExecution: round(executor),
      floorCpuMsPerExecution: round(floor),
      ratio: round(executor / floor),
      executorSyscallsPerExecution: executorCalls,
      floorSyscallsPerExecution: floorCalls,
      roundsExecutorMs: executorMs.map(round),
      roundsFloorMs: floorMs.map(round),
    };
    const { description: _description, ...figures } = report;
    console.log(JSON.stringify(figures, null, 2));
    writeResult(args.includes('--out') ? args[args.indexOf('--out') + 1]! : 'execution', report);
  } finally {
    await cluster.stop();
    await dbs.dispose();
  }
}
