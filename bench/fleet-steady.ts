// The fleet's steady state (issue 28, the cost model): once every policy is converged, each one is reconciled
// again every `interval` (5m by default) and nothing has changed. One steady wave asks every converged policy
// to reconcile now (`rolepolicy.io/reconcile-requested-at`, as a person or the interval would) and waits until
// each has handled it; it reports what a no-op reconcile costs per policy: the services' CPU by service,
// PostgreSQL's, sessions, inspections by outcome, passes by decision, messages and API writes. Its floor, in
// the same run: the read a no-op reconcile cannot avoid, the scope's catalog fingerprint, read per database in
// a session of its own through libs/catalog, with the inspector's concurrency.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { openConnection, readFingerprint } from '@rolepolicy/catalog';
import { GROUP, KIND_NAMES, RECONCILE_REQUESTED_AT_ANNOTATION, VERSION } from '@rolepolicy/kube';
import type { ManagedScope } from '@rolepolicy/policy';

import { benchCpuSeconds, cpuDelta } from './cpu-time.js';
import type { FleetDatabases } from './fleet-databases.js';
import { ApiWriteCounter, writesPerPolicy } from './fleet-health.js';
import { round } from './pg-bench-support.js';
import { byLabel } from './service-metrics.js';
import type { ProductProcesses } from './service-processes.js';

/** What one no-op reconcile of a converged policy costs, per policy, and its floor. */
export interface SteadyWave {
  readonly policies: number;
  readonly seconds: number;
  /** CPU ms per policy by service, PostgreSQL (every server on the machine) and the bench's API emulator. */
  readonly cpuMsPerPolicy: Record<string, number>;
  /** The five services together (not PostgreSQL, not the emulator). */
  readonly serviceCpuMsPerPolicy: number;
  readonly sessionsPerPolicy: number;
  readonly transactionsPerPolicy: number;
  readonly inspections: Record<string, number>;
  readonly passes: Record<string, number>;
  readonly messages: Record<string, number>;
  /** API writes per policy by kind; the wave's own annotation writes are left out. */
  readonly apiWrites: Record<string, number>;
  readonly floor: {
    readonly seconds: number;
    readonly cpuMsPerPolicy: Record<string, number>;
    readonly sessionsPerPolicy: number;
  };
  /** The services' CPU plus PostgreSQL's over the floor's bench plus PostgreSQL's. */
  readonly cpuOverFloor: number;
}

/** Everything the wave measures, read before and after it. */
interface Sample {
  readonly cpu: Record<string, number>;
  readonly activity: { sessions: number; transactions: number };
  readonly labels: readonly Map<string, number>[];
}

const LABELLED = [
  ['rp_inspect_requests_total', 'outcome'],
  ['rp_planner_reconcile_seconds_count', 'decision'],
  ['rp_messages_handled_total', 'subject'],
] as const;

async function sample(
  product: ProductProcesses,
  dbs: FleetDatabases,
  count: number,
  postgresCpu: () => number,
): Promise<Sample> {
  return {
    cpu: {
      ...product.cpuSeconds(),
      postgres: postgresCpu(),
      'bench (API emulator)': benchCpuSeconds().own,
    },
    activity: await dbs.activity(count),
    labels: await Promise.all(LABELLED.map(([name, label]) => byLabel(product, name, label))),
  };
}

/** Per policy, how `after` grew over `before` for each label value (zero rows left out). */
export function grownPerPolicy(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  policies: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, total] of after) {
    const grown = total - (before.get(key) ?? 0);
    if (grown > 0) out[key] = round(grown / policies);
  }
  return out;
}

const perPolicyMs = (delta: Record<string, number>, policies: number): Record<string, number> =>
  Object.fromEntries(Object.entries(delta).map(([k, seconds]) => [k, round((seconds * 1000) / policies)]));

/** Asks each policy to reconcile now, 100 requests at a time; returns the annotation's value. */
async function requestReconcile(
  custom: CustomObjectsApi,
  namespace: string,
  names: readonly string[],
): Promise<string> {
  const at = new Date().toISOString();
  for (let i = 0; i < names.length; i += 100) {
    await Promise.all(
      names.slice(i, i + 100).map((name) =>
        custom.patchNamespacedCustomObject(
          {
            group: GROUP,
            version: VERSION,
            namespace,
            plural: KIND_NAMES.PostgresPolicy.plural,
            name,
            body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: at } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    );
  }
  return at;
}

/** Waits until every named policy's status says it handled the request `at` (30 min at most). */
async function waitHandled(
  custom: CustomObjectsApi,
  namespace: string,
  names: readonly string[],
  at: string,
) {
  const wanted = new Set(names);
  const started = performance.now();
  for (;;) {
    const list = (await custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: KIND_NAMES.PostgresPolicy.plural,
    })) as { items: { metadata: { name: string }; status?: { lastHandledReconcileAt?: string | null } }[] };
    const handled = list.items.filter(
      (p) => wanted.has(p.metadata.name) && p.status?.lastHandledReconcileAt === at,
    ).length;
    if (handled === wanted.size) return;
    if (performance.now() - started > 30 * 60_000)
      throw new Error(
        `steady wave: only ${handled} of ${wanted.size} policies handled the request in 30 min`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The floor: each scope's fingerprint, read in a session of its own, `concurrency` at a time. */
async function fingerprintFloor(
  dbs: FleetDatabases,
  scopes: readonly ManagedScope[],
  concurrency: number,
  postgresCpu: () => number,
): Promise<{ seconds: number; cpuMsPerPolicy: Record<string, number>; sessionsPerPolicy: number }> {
  const cpuBefore = { 'bench (libs/catalog)': benchCpuSeconds().own, postgres: postgresCpu() };
  const activityBefore = await dbs.activity(scopes.length);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < scopes.length) {
        const index = next++;
        const connection = openConnection({ url: dbs.url(index), maxConnections: 1 });
        try {
          const fingerprint = await connection.db
            .transaction()
            .setIsolationLevel('repeatable read')
            .setAccessMode('read only')
            .execute((trx) => readFingerprint(trx, scopes[index]!));
          if (fingerprint === null) throw new Error(`database ${index}: the scope has no fingerprint`);
        } finally {
          await connection.close();
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = { 'bench (libs/catalog)': benchCpuSeconds().own, postgres: postgresCpu() };
  const activity = await dbs.activity(scopes.length);
  return {
    seconds: round(seconds),
    cpuMsPerPolicy: perPolicyMs(cpuDelta(cpuBefore, cpuAfter), scopes.length),
    sessionsPerPolicy: round((activity.sessions - activityBefore.sessions) / scopes.length),
  };
}

/**
 * One steady wave over the converged policies `names` (policy i on database i, scope `scopes[i]`), then its
 * floor with `floorConcurrency` sessions at once; `postgresCpu` reads the CPU seconds of the bench's servers.
 */
export async function steadyWave(
  product: ProductProcesses,
  dbs: FleetDatabases,
  namespace: string,
  names: readonly string[],
  scopes: readonly ManagedScope[],
  floorConcurrency: number,
  postgresCpu: () => number,
): Promise<SteadyWave> {
  const custom = product.emulator.kubeConfig(namespace).makeApiClient(CustomObjectsApi);
  const count = names.length;
  const before = await sample(product, dbs, count, postgresCpu);
  const writes = new ApiWriteCounter();
  product.emulator.setRequestHook(writes.hook);
  const started = performance.now();
  const at = await requestReconcile(custom, namespace, names);
  await waitHandled(custom, namespace, names, at);
  const seconds = (performance.now() - started) / 1000;
  product.emulator.setRequestHook(undefined);
  const after = await sample(product, dbs, count, postgresCpu);
  const counted = writes.snapshot();
  // The wave's own requests are the user's, not the product's.
  counted.set('PATCH postgrespolicies', (counted.get('PATCH postgrespolicies') ?? 0) - count);
  const cpuMsPerPolicy = perPolicyMs(cpuDelta(before.cpu, after.cpu), count);
  const serviceCpuMsPerPolicy = round(
    Object.entries(cpuMsPerPolicy)
      .filter(([name]) => name !== 'postgres' && !name.startsWith('bench'))
      .reduce((sum, [, ms]) => sum + ms, 0),
  );
  const floor = await fingerprintFloor(dbs, scopes, floorConcurrency, postgresCpu);
  const floorMs = Object.values(floor.cpuMsPerPolicy).reduce((a, b) => a + b, 0);
  return {
    policies: count,
    seconds: round(seconds),
    cpuMsPerPolicy,
    serviceCpuMsPerPolicy,
    sessionsPerPolicy: round((after.activity.sessions - before.activity.sessions) / count),
    transactionsPerPolicy: round((after.activity.transactions - before.activity.transactions) / count),
    inspections: grownPerPolicy(before.labels[0]!, after.labels[0]!, count),
    passes: grownPerPolicy(before.labels[1]!, after.labels[1]!, count),
    messages: grownPerPolicy(before.labels[2]!, after.labels[2]!, count),
    apiWrites: writesPerPolicy(new Map(), counted, count),
    floor,
    cpuOverFloor: round((serviceCpuMsPerPolicy + (cpuMsPerPolicy['postgres'] ?? 0)) / floorMs),
  };
}
