// `npm run bench -- ephemeral`: revocation lag of ephemeral access on the whole product: each service a process
// of its own (`--in-process`: all of them in this process, the e2e stack; ephemeral-product.ts), the API emulator
// in this process, a private redis-server. N requests over D databases, all activated, expiring spread over one
// window; lag = the moment the membership is gone from pg_auth_members (polled) minus the request's expiresAt.
// Floor, same run: the same REVOKE statements run directly on the same databases.
// `Ended` lag = the moment a watch on the requests sees the request `Ended` minus its expiresAt.
// Each service's CPU seconds while requests are activated and while they expire, and its peak RSS, are in the
// result. The run fails its own check (exit code 1) when a goal is missed. -> bench/results/ephemeral.json.

import os from 'node:os';

import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import { startPrivateRedis } from '@rolepolicy/testing';
import { Redis } from 'ioredis';
import pg from 'pg';

import { sleep, waitFor, type TargetDatabase } from '../e2e/stack.js';
import { cpuDelta } from './cpu-time.js';
import { writesPerPolicy } from './fleet-health.js';
import { startEphemeralProduct, type EphemeralLayout, type EphemeralProduct } from './ephemeral-product.js';
import { round, writeResult } from './pg-bench-support.js';
import { histogramMeanMs, metricsText } from './service-metrics.js';
import { linkCrdsIntoDist } from './reconcile.bench.js';

const NAMESPACE = 'bench-eph';
const POLL_MS = 200;
/** The goals: membership gone p99 < 2 s and max < 5 s after expiresAt; `Ended` shown p99 < 5 s after it. */
const GOALS = { p99Ms: 2000, maxMs: 5000, endedP99Ms: 5000 } as const;
const PREFIX = 'rp-bench-eph';

type Options = {
  readonly requests: number;
  readonly databases: number;
  readonly windowSeconds: number;
  readonly leadSeconds: number;
  readonly layout: EphemeralLayout;
};

/** Options from flags, else `BENCH_EPHEMERAL_<NAME>` variables, else the full scale. */
function parse(args: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const at = args.indexOf(`--${flag}`);
    return at >= 0 ? args[at + 1] : process.env[`BENCH_EPHEMERAL_${flag.toUpperCase()}`];
  };
  const requests = Number(value('requests') ?? 1000);
  return {
    requests,
    databases: Number(value('databases') ?? 50),
    windowSeconds: Number(value('window') ?? 60),
    // Every request is activated before the first expiry: up to 0.6 s per request on a loaded 2-core machine
    // (the gateway applies about 14 commands per request one at a time), at least 4 minutes.
    leadSeconds: Number(value('lead') ?? Math.max(240, Math.ceil(requests * 0.6))),
    layout: args.includes('--in-process') ? 'in-process' : 'processes',
  };
}

/** Runs `task` for 0..count-1, at most `parallel` at once. */
async function inParallel(
  count: number,
  parallel: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}

/**
 * The scheduler's own revocation lag and where a revocation's time goes, hop by hop (docs/ephemeral-access.md,
 * "Where the time goes"): means in milliseconds from the scheduler's and the executor's /metrics.
 */
async function revocationMetrics(product: EphemeralProduct) {
  const metrics = await metricsText(product.url('access-scheduler'));
  const executorMetrics = await metricsText(product.url('executor'));
  const dispatch = histogramMeanMs(metrics, 'rolepolicy_ephemeral_revoke_dispatch_seconds');
  return {
    schedulerReportedLagMeanMs: histogramMeanMs(metrics, 'rolepolicy_ephemeral_revocation_lag_seconds'),
    revokeDispatchMeanMs: dispatch,
    revokeHopsMeanMs: {
      timerLate: histogramMeanMs(metrics, 'rolepolicy_ephemeral_timer_latency_seconds', 'queue="expiry"'),
      dispatch,
      ...Object.fromEntries(
        ['queued', 'visible', 'connect', 'database_wait', 'lock_wait', 'decide', 'commit', 'report'].map(
          (stage) => [
            stage,
            histogramMeanMs(
              executorMetrics,
              'rolepolicy_ephemeral_scoped_stage_seconds',
              `operation="Revoke",stage="${stage}"`,
            ),
          ],
        ),
      ),
    },
  };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

const summary = (values: readonly number[]) => ({
  p50: round(percentile(values, 50)),
  p99: round(percentile(values, 99)),
  max: round(Math.max(...values)),
});

/**
 * Watches the bench's requests from now on and hands each one seen to `note` with the moment it was seen;
 * restarts where it stopped should the stream end.
 */
async function watchRequests(
  kubeConfig: KubeConfig,
  note: (r: EphemeralAccessRequest, seen: number) => void,
): Promise<{ stop: () => void; events: () => number }> {
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/${KIND_NAMES.EphemeralAccessRequest.plural}`;
  let stopped = false;
  let events = 0;
  let resourceVersion: string | undefined;
  let controller: AbortController | undefined;
  const start = async (): Promise<void> => {
    if (stopped) return;
    controller = await new Watch(kubeConfig).watch(
      path,
      resourceVersion === undefined ? {} : { resourceVersion },
      (_type: string, r: EphemeralAccessRequest) => {
        events++;
        resourceVersion = r.metadata?.resourceVersion ?? resourceVersion;
        note(r, Date.now());
      },
      () => {
        if (!stopped) setTimeout(() => void start().catch(() => undefined), 100);
      },
    );
  };
  await start();
  return {
    stop: () => {
      stopped = true;
      controller?.abort();
    },
    events: () => events,
  };
}

type Edge = { db: number; subject: string; request: string; expiresAt: number; revokedAt?: number };

/** Runs the benchmark. `--requests 1000 --databases 50 --window 60 --lead 240 [--in-process]`. */
export async function runEphemeralBench(_script: string, args: readonly string[]): Promise<void> {
  const options = parse(args);
  linkCrdsIntoDist();
  const perDb = Math.ceil(options.requests / options.databases);
  console.log(
    `ephemeral bench: ${options.requests} requests over ${options.databases} databases, window ${options.windowSeconds} s, ` +
      `services ${options.layout === 'processes' ? 'as processes' : 'in-process'}`,
  );
  const redis = await startPrivateRedis();
  const product = await startEphemeralProduct(options.layout, NAMESPACE, {
    redisUrl: redis.url,
    redisPrefix: PREFIX,
  }).catch(async (error: unknown) => {
    await redis.stop();
    throw error;
  });
  const pools: pg.Pool[] = [];
  const onSignal = (): void => {
    void product
      .stop()
      .then(() => redis.stop())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const custom = product.kubeConfig.makeApiClient(CustomObjectsApi);
    const create = (kind: 'EphemeralAccessPolicy' | 'EphemeralAccessRequest', name: string, spec: object) =>
      custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        plural: KIND_NAMES[kind].plural,
        namespace: NAMESPACE,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, spec },
      });
    // Roles of their own per database: roles are server-wide, so the same names in every database would be one
    // set of roles and edges that 20 policies fight over (a Conflict for all but one since ADR 0027).
    const reader = (d: number) => product.role(`d${d}_reader`);
    const subject = (d: number, k: number) => product.role(`d${d}_s${k}`);
    const dbs: TargetDatabase[] = [];
    // One session per database, opened when first used (the floor's statements run in each database).
    const pool = (d: number): pg.Pool => {
      if (pools[d] === undefined) {
        pools[d] = new pg.Pool({ connectionString: dbs[d]!.url, max: 1 });
        pools[d].on('error', () => undefined);
      }
      return pools[d];
    };
    let started = performance.now();
    // Databases and their policies in parallel (creating 50 one by one took minutes on a loaded machine).
    await inParallel(options.databases, 8, async (d) => {
      const db = await product.createDatabase(`eph${d}`);
      dbs[d] = db;
      await product.resources.createPolicy(`p${d}`, {
        connection: db.connection,
        mode: 'apply',
        approval: 'auto',
        roles: [
          { name: reader(d), login: false },
          ...Array.from({ length: perDb }, (_, k) => ({ name: subject(d, k), login: true })),
        ],
      });
    });
    console.log(`${options.databases} databases created in ${round((performance.now() - started) / 1000)} s`);
    for (let d = 0; d < options.databases; d++) await product.reconciled(`p${d}`, 600_000);
    for (let d = 0; d < options.databases; d++) {
      await create('EphemeralAccessPolicy', `a${d}`, {
        approval: { mode: 'Automatic' },
        justification: { required: false },
        maximumDuration: '2h',
        memberships: [{ role: reader(d), inherit: true }],
        postgresPolicyRef: { name: `p${d}` },
      });
    }
    const setupSeconds = (performance.now() - started) / 1000;
    console.log(`setup: ${options.databases} databases and policies in ${round(setupSeconds)} s`);

    // Expiry spread evenly over the window, starting `lead` seconds from now (activation happens before).
    const firstExpiry = Date.now() + options.leadSeconds * 1000;
    started = performance.now();
    const cpuAtCreate = product.cpuSeconds();
    const writesAtCreate = product.apiWrites();
    const names: { name: string; db: number; k: number }[] = [];
    for (let i = 0; i < options.requests; i++) {
      const db = i % options.databases;
      const k = Math.floor(i / options.databases);
      const target = firstExpiry + Math.floor((i * options.windowSeconds * 1000) / options.requests);
      const seconds = Math.max(1, Math.ceil((target - Date.now()) / 1000));
      const name = `r${db}-${k}`;
      names.push({ name, db, k });
      await create('EphemeralAccessRequest', name, {
        accessPolicyRef: { name: `a${db}` },
        subject: { role: subject(db, k) },
        requestedBy: { username: 'bench@example.com' },
        requestedDuration: `${seconds}s`,
      });
    }
    const createSeconds = (performance.now() - started) / 1000;
    const list = async (): Promise<EphemeralAccessRequest[]> =>
      (
        (await custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          plural: KIND_NAMES.EphemeralAccessRequest.plural,
          namespace: NAMESPACE,
        })) as { items: EphemeralAccessRequest[] }
      ).items;
    let lastProgress = Date.now();
    const actives = await waitFor(
      'every request Active',
      async () => {
        const items = await list();
        const active = items.filter((r) => r.status?.phase === 'Active');
        if (Date.now() - lastProgress > 10_000) {
          lastProgress = Date.now();
          const phases: Record<string, number> = {};
          for (const r of items)
            phases[r.status?.phase ?? 'none'] = (phases[r.status?.phase ?? 'none'] ?? 0) + 1;
          console.log(`after ${round((performance.now() - started) / 1000)} s: ${JSON.stringify(phases)}`);
        }
        return active.length === options.requests ? items : Date.now() > firstExpiry ? items : undefined;
      },
      // Every 2 s, not the default 100 ms: listing 1,000 requests through the emulator runs on the bench's event
      // loop (in-process, every service's too), and at full scale the polling alone starved activation.
      { timeoutMs: options.leadSeconds * 1000 + 30_000, intervalMs: 2_000 },
    );
    const activationSeconds = (performance.now() - started) / 1000;
    const cpuAtActive = product.cpuSeconds();
    const writesAtActive = product.apiWrites();
    // Each service's CPU over the revocation window: from the first expiry (or now, if activation ran past it)
    // to the last `Ended` seen; the idle wait between activation and the first expiry is nobody's cost.
    let cpuAtFirstExpiry = cpuAtActive;
    let writesAtFirstExpiry = writesAtActive;
    let windowStart = performance.now();
    const firstExpiryTimer = setTimeout(
      () => {
        cpuAtFirstExpiry = product.cpuSeconds();
        writesAtFirstExpiry = product.apiWrites();
        windowStart = performance.now();
      },
      Math.max(0, firstExpiry - Date.now()),
    );
    const activeBeforeExpiry = actives.filter((r) => r.status?.phase === 'Active').length;
    console.log(`${activeBeforeExpiry}/${options.requests} Active after ${round(activationSeconds)} s`);
    const admin = new Redis(redis.url);
    const memory = await admin.info('memory');
    const redisUsedMemoryBytes = Number(/used_memory:(\d+)/.exec(memory)?.[1] ?? NaN);
    const redisKeys = (await admin.keys(`${PREFIX}:*`)).length;
    admin.disconnect();

    const edges: Edge[] = actives
      .filter((r) => r.status?.phase === 'Active')
      .map((r) => {
        const meta = names.find((n) => n.name === r.metadata.name)!;
        return {
          db: meta.db,
          subject: subject(meta.db, meta.k),
          request: r.metadata.name!,
          expiresAt: Date.parse(r.status!.expiresAt!),
        };
      });
    // What `kubectl get -w` shows: the moment a watch on the requests sees a request Ended (before: a list
    // every 2 s, which added up to 2 s to each figure and listed 1,000 requests on the services' event loop).
    const endedSeen = new Map<string, number>();
    // And the request's own endedAt (when the scheduler's pass decided Ended): the gap is the write's way out.
    const endedAt = new Map<string, number>();
    const note = (r: EphemeralAccessRequest, seen: number): void => {
      if (r.status?.phase !== 'Ended' || endedSeen.has(r.metadata.name!)) return;
      endedSeen.set(r.metadata.name!, seen);
      endedAt.set(r.metadata.name!, Date.parse(r.status.endedAt ?? ''));
    };
    const watched = await watchRequests(product.kubeConfig, note);
    // A list as well, at the end and as a fallback should the watch have missed one.
    let endedSeenByList = 0;
    const noteEnded = async (): Promise<void> => {
      const now = Date.now();
      const before = endedSeen.size;
      for (const r of await list()) note(r, now);
      endedSeenByList += endedSeen.size - before;
    };
    // The machine's load while requests expire (other work on a shared machine moves every figure).
    let loadMax = os.loadavg()[0]!;
    const loadTimer = setInterval(() => (loadMax = Math.max(loadMax, os.loadavg()[0]!)), 5_000).unref();
    const deadline = firstExpiry + (options.windowSeconds + 180) * 1000;
    while (edges.some((e) => e.revokedAt === undefined) && Date.now() < deadline) {
      const now = Date.now();
      const due = new Set(
        edges.filter((e) => e.revokedAt === undefined && e.expiresAt <= now).map((e) => e.db),
      );
      // One session for every database: memberships are server-wide (pg_auth_members is a shared catalog).
      // A session per database held 50 of the server's 100 connections, and the product met 53300.
      const rows = (
        await pool(0).query<{ role: string; member: string }>(
          `SELECT r.rolname AS role, u.rolname AS member FROM pg_auth_members m
             JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
            WHERE r.rolname = ANY($1::text[])`,
          [[...due].map(reader)],
        )
      ).rows;
      const present = new Set(rows.map((row) => `${row.role}\u0000${row.member}`));
      const seen = Date.now();
      for (const e of edges) {
        const key = `${reader(e.db)}\u0000${e.subject}`;
        if (e.revokedAt === undefined && e.expiresAt <= now && due.has(e.db) && !present.has(key))
          e.revokedAt = seen;
      }
      await sleep(POLL_MS);
    }
    const revoked = edges.filter((e) => e.revokedAt !== undefined);
    const lags = revoked.map((e) => e.revokedAt! - e.expiresAt);
    const endedAtPoll = endedSeen.size;
    const endDeadline = Date.now() + 120_000;
    for (let i = 1; endedSeen.size < revoked.length && Date.now() < endDeadline; i++) {
      await sleep(1_000);
      if (i % 10 === 0) await noteEnded();
    }
    watched.stop();
    clearInterval(loadTimer);
    await noteEnded();
    clearTimeout(firstExpiryTimer);
    const cpuAtEnded = product.cpuSeconds();
    const writesAtEnded = product.apiWrites();
    const revocationWindowSeconds = (performance.now() - windowStart) / 1000;
    // Read before the services stop: a process's figures go with it.
    const peakRssMiB = product.peakRssMiB();
    const revocationCpuSeconds = cpuDelta(cpuAtFirstExpiry, cpuAtEnded);
    const endedLags = revoked
      .filter((e) => endedSeen.has(e.request))
      .map((e) => Math.max(0, endedSeen.get(e.request)! - e.expiresAt));
    // The Ended path alone: how long after its membership was gone a request showed Ended (on a loaded machine
    // the revocation's own lag moves both figures; this one is what the scheduler's status writes add).
    const endedAfterGone = revoked
      .filter((e) => endedSeen.has(e.request))
      .map((e) => endedSeen.get(e.request)! - e.revokedAt!);
    const decidedLags = revoked
      .filter((e) => Number.isFinite(endedAt.get(e.request)))
      .map((e) => endedAt.get(e.request)! - e.expiresAt);
    const hops = await revocationMetrics(product);

    // Floor: the same REVOKEs run directly, one statement at a time, after granting the edges again, with the
    // services stopped: a running planner removes the re-granted (now undeclared) edges itself, and its
    // REVOKE racing ours failed the whole run ("tuple concurrently deleted").
    await product.stopServices();
    const floor: number[] = [];
    for (let d = 0; d < options.databases; d++) {
      const subjects = edges.filter((e) => e.db === d).map((e) => e.subject);
      for (const s of subjects) await pool(d).query(`GRANT "${reader(d)}" TO "${s}"`);
      for (const s of subjects) {
        const t = performance.now();
        await pool(d).query(`REVOKE "${reader(d)}" FROM "${s}"`);
        floor.push(performance.now() - t);
      }
    }
    const lagSummary = summary(lags);
    const floorSummary = summary(floor);
    const endedSummary = endedLags.length === 0 ? null : summary(endedLags);
    const misses = [
      ...(lagSummary.p99 >= GOALS.p99Ms
        ? [`membership gone p99 ${lagSummary.p99} ms (goal < ${GOALS.p99Ms})`]
        : []),
      ...(lagSummary.max >= GOALS.maxMs
        ? [`membership gone max ${lagSummary.max} ms (goal < ${GOALS.maxMs})`]
        : []),
      ...(endedSummary === null || endedSummary.p99 >= GOALS.endedP99Ms
        ? [`Ended shown p99 ${endedSummary?.p99 ?? 'never'} ms (goal < ${GOALS.endedP99Ms})`]
        : []),
      ...(endedSeen.size < revoked.length
        ? [`${revoked.length - endedSeen.size} revoked requests never Ended`]
        : []),
      ...(activeBeforeExpiry < options.requests
        ? [`${options.requests - activeBeforeExpiry} requests not Active before expiry (raise --lead)`]
        : []),
    ];
    const report = {
      benchmark: 'ephemeral',
      description:
        'N Automatic EphemeralAccessRequests over D databases (one access policy and one target PostgresPolicy per database, ' +
        'one bundle role, distinct subjects), all activated first, expiresAt spread evenly over the window. Revocation lag = ' +
        `first poll (every ${POLL_MS} ms) that no longer sees the membership in pg_auth_members minus expiresAt. Floor = the ` +
        'same REVOKE statements run directly, one at a time, on the same databases. ' +
        (options.layout === 'processes'
          ? 'Each service a Node process of its own (dist/), the API emulator in the bench process, '
          : 'Every service in the bench process (e2e stack) with the API emulator, ') +
        'one executor, a private redis-server, rebuild interval at its default. serviceCpuSeconds: CPU seconds of ' +
        'each service process (bench: the bench process, with the emulator) from the first request created until ' +
        'all were Active (activation) and from the first expiry until the last Ended was seen (revocation, ' +
        'revocationCpuWindowSeconds long).',
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryGb: round(os.totalmem() / 1024 ** 3),
        loadAverage1mAtStart: round(os.loadavg()[0]!),
      },
      node: process.version,
      layout: options.layout,
      measuredAt: new Date().toISOString(),
      fullScale: options.requests === 1000 && options.databases === 50 && options.windowSeconds === 60,
      leadSeconds: options.leadSeconds,
      requests: options.requests,
      databases: options.databases,
      windowSeconds: options.windowSeconds,
      setupSeconds: round(setupSeconds),
      createSeconds: round(createSeconds),
      activationSeconds: round(activationSeconds),
      activeBeforeExpiry,
      revoked: revoked.length,
      endedWhenLastRevoked: endedAtPoll,
      ended: endedSeen.size,
      endedVisibleLagMs: endedSummary,
      watchEvents: watched.events(),
      endedSeenByList,
      endedAfterMembershipGoneMs: endedAfterGone.length === 0 ? null : summary(endedAfterGone),
      loadAverage1mMax: round(loadMax),
      endedAtLagMs: decidedLags.length === 0 ? null : summary(decidedLags),
      revocationLagMs: lagSummary,
      ...hops,
      revocationCpuWindowSeconds: round(revocationWindowSeconds),
      serviceCpuSeconds: { activation: cpuDelta(cpuAtCreate, cpuAtActive), revocation: revocationCpuSeconds },
      serviceCpuMsPerRevocation: Object.fromEntries(
        Object.entries(revocationCpuSeconds).map(([k, v]) => [k, round((v * 1000) / revoked.length)]),
      ),
      servicePeakRssMiB: peakRssMiB,
      // API writes by kind: per request created until all were Active, per revocation over the revocation window.
      apiWritesPerActivation: writesPerPolicy(writesAtCreate, writesAtActive, options.requests),
      apiWritesPerRevocation: writesPerPolicy(writesAtFirstExpiry, writesAtEnded, revoked.length),
      pollIntervalMs: POLL_MS,
      redisUsedMemoryBytes,
      redisKeys,
      floorRevokeMs: floorSummary,
      ratioP99: round(lagSummary.p99 / floorSummary.p99),
      goals: GOALS,
      misses,
    };
    console.log(JSON.stringify(report, null, 2));
    writeResult('ephemeral', report);
    console.log(
      `membership gone p50/p99 ${lagSummary.p50}/${lagSummary.p99} ms; Ended shown p50/p99 ` +
        `${endedSummary?.p50 ?? '-'}/${endedSummary?.p99 ?? '-'} ms after expiresAt (load up to ${round(loadMax)})` +
        (misses.length === 0 ? ' (goals met)' : `\nMISSED: ${misses.join('; ')}`),
    );
    if (misses.length > 0) process.exitCode = 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const pool of pools) await pool.end().catch(() => undefined);
    await product.stop();
    await redis.stop();
  }
}
