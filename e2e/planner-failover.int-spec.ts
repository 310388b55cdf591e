// Planner failover through the whole stack (issue 15, ADR 0011): two planner processes elect a leader over
// the rp-leaders KV lease; the leader is killed with SIGKILL (no cleanup, lease not released) while it
// reconciles several new policies. The standby takes over within one lease period plus the election's
// retry granularity, every policy converges, and no plan is duplicated (one plan per policy and change
// digest, no `-2` names). A command sent in the dead leader's epoch is refused by the gateway's fence.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  k8sCommandContract,
  k8sCommandSubject,
  openLeaseBucket,
  readLease,
  type K8sCommandV1,
} from '@rolepolicy/contracts';
import { freePort, inspectSealEnv, spawnTs } from '@rolepolicy/testing';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

// Short enough for a test, long enough that a leader on a loaded two-core machine still renews in time.
const LEASE_MS = 6_000;
const RENEW_DEADLINE_MS = 4_000;
const RETRY_MS = 1_000;
/** Takeover bound: the standby times the record from when it first saw it (up to one retry late) and acts
 * on its next round (one more retry); the slack covers process scheduling on a shared machine. */
const TAKEOVER_BOUND_MS = LEASE_MS + 2 * RETRY_MS + 4_000;
const POLICIES = 8;
const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../apps/planner/src/main.ts');

type Planner = {
  readonly identity: string;
  readonly child: ChildProcess;
  readonly url: string;
  /** When the process logged that it took the lease (its own clock: the machine's), per epoch. */
  readonly ledAt: Map<number, number>;
  /** Its last log lines (printed when a wait on it times out). */
  readonly lines: string[];
  /** Set once it logged that it joined the election (kept: `lines` rolls over). */
  readonly joined: { value: boolean };
};

let stack: Stack;
let db: TargetDatabase;
const planners: Planner[] = [];

async function startPlanner(identity: string): Promise<Planner> {
  const port = await freePort();
  const ledAt = new Map<number, number>();
  const lines: string[] = [];
  const joined = { value: false };
  const child = spawnTs(MAIN, {
    env: {
      NATS_URL: stack.nats.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      KUBECONFIG: stack.emulator.kubeconfigPath,
      // `log` at least: the line saying it leads is how the test times the takeover.
      LOG_LEVEL: process.env['E2E_LOG_LEVEL'] ?? 'log',
      PLANNER_IDENTITY: identity,
      // The same key pair as the stack's inspector (ADR 0024): the planner seals connections to it.
      INSPECT_SEAL_PUBLIC_KEY: inspectSealEnv().INSPECT_SEAL_PUBLIC_KEY,
      PLANNER_LEASE_DURATION_MS: String(LEASE_MS),
      PLANNER_LEASE_RENEW_DEADLINE_MS: String(RENEW_DEADLINE_MS),
      PLANNER_LEASE_RETRY_MS: String(RETRY_MS),
    },
    onLine: (line) => {
      if (process.env['E2E_LOG_LEVEL']) console.log(`[${identity}] ${line}`);
      lines.push(line);
      if (lines.length > 40) lines.shift();
      if (line.includes('joined the election')) joined.value = true;
      const led = / leads \(epoch (\d+)\)/.exec(line);
      if (led) ledAt.set(Number(led[1]), Date.parse((JSON.parse(line) as { time: string }).time));
    },
  });
  if (process.env['E2E_LOG_LEVEL'])
    child.stderr?.on('data', (chunk) => console.log(`[${identity}] ${String(chunk)}`));
  const planner = { identity, child, url: `http://127.0.0.1:${port}`, ledAt, lines, joined };
  planners.push(planner);
  return planner;
}

/** `rp_planner_leader` of one planner process; undefined while it does not answer. */
async function leaderGauge(planner: Planner): Promise<number | undefined> {
  try {
    const res = await fetch(`${planner.url}/metrics`, { signal: AbortSignal.timeout(2_000) });
    const match = /^rp_planner_leader(?:\{[^}]*\})? (\d)/m.exec(await res.text());
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function readyz(planner: Planner): Promise<number | undefined> {
  try {
    const res = await fetch(`${planner.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

async function reconciledCount(names: readonly string[]): Promise<number> {
  let count = 0;
  for (const name of names) {
    const p = await stack.resources.policy(name);
    const ready = condition(p?.status?.conditions, 'Ready');
    if (
      ready?.status === 'True' &&
      ready.reason === 'Reconciled' &&
      p?.status?.observed_generation === p?.metadata.generation
    )
      count += 1;
  }
  return count;
}

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('failover');
  // The stack's in-process planner gives way to two planner processes that can be killed.
  await stack.stopServices(['planner']);
}, 60_000);

afterAll(async () => {
  for (const p of planners)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await stack?.stop();
});

test('the leader killed mid-reconcile: the standby takes over within one lease period, no plan lost or duplicated', async () => {
  const a = await startPlanner('planner-a');
  const b = await startPlanner('planner-b');
  // Both are ready (a standby is ready: it only does not lead); exactly one leads.
  // Starting compiles the sources (swc) in each process: slow on a shared machine.
  await waitFor('both planners ready', async () => (await readyz(a)) === 200 && (await readyz(b)) === 200, {
    timeoutMs: 120_000,
  });
  // Joining waits for the cache to catch up with the resource stream: also slow on a loaded CI machine (a
  // run of the whole suite timed out at the default 20 s).
  await waitFor('both planners in the election', () => [a, b].every((p) => p.joined.value), {
    timeoutMs: 60_000,
  });
  const [leader, standby] = await waitFor(
    'one planner leading',
    async () => {
      const [ga, gb] = [await leaderGauge(a), await leaderGauge(b)];
      if (ga === 1 && gb === 0) return [a, b] as const;
      if (gb === 1 && ga === 0) return [b, a] as const;
      return undefined;
    },
    { timeoutMs: 15_000 },
  );

  const names = Array.from({ length: POLICIES }, (_, i) => `failover-${i}`);
  for (const [i, name] of names.entries()) {
    await stack.resources.createPolicy(name, {
      connection: db.connection,
      mode: 'apply',
      approval: 'auto',
      roles: [{ name: stack.role(`fo_${i}`), login: false }],
    });
  }
  // Mid-reconcile: the leader has created its first plan, and not every policy has converged.
  await waitFor(
    'the leader to create a first plan',
    async () => (await Promise.all(names.map((n) => stack.resources.plans(n)))).some((p) => p.length > 0),
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  leader.child.kill('SIGKILL');
  const killedAt = Date.now();
  await new Promise((resolve) => leader.child.once('exit', resolve));
  expect(await reconciledCount(names)).toBeLessThan(POLICIES);

  await waitFor('the standby to lead', async () => (await leaderGauge(standby)) === 1, {
    timeoutMs: TAKEOVER_BOUND_MS + 5_000,
    intervalMs: 50,
    describe: () => standby.lines.slice(-15),
  });
  // Timed by the standby's own log line (probe delays on a busy machine do not count).
  const [takeover] = [...standby.ledAt.entries()].filter(([, at]) => at >= killedAt);
  expect(takeover).toBeDefined();
  expect(takeover![1] - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);

  for (const name of names) await stack.reconciled(name, 60_000);

  const digests = new Map<string, (string | undefined)[]>();
  for (const name of names) {
    const plans = await stack.resources.plans(name);
    expect(plans.length).toBeGreaterThan(0);
    for (const plan of plans) {
      // `<policy>-<12 hex>`, never the `-2` of a second plan with the same effects.
      expect(plan.metadata.name).toMatch(new RegExp(`^${name}-[0-9a-f]{12}$`));
      const key = `${name}/${plan.status?.changeDigest ?? '?'}`;
      digests.set(key, [...(digests.get(key) ?? []), plan.metadata.name]);
    }
    expect(plans.filter((p) => p.status?.phase === 'Applied')).toHaveLength(1);
  }
  for (const [key, plans] of digests) expect({ key, plans }).toEqual({ key, plans: [plans[0]] });
}, 300_000);

test("a command sent in the dead leader's epoch is refused by the gateway; the current epoch's are applied", async () => {
  const nats: NatsConnection = await connect({ servers: stack.nats.url });
  try {
    const publisher = new JetStreamPublisher(nats);
    // Probes the planner may write (ADR 0022): `-sql` ConfigMaps controlled by one of its policies.
    const owner = (await stack.resources.policy('failover-0'))!.metadata;
    const ownerReferences = [
      {
        apiVersion: 'rolepolicy.io/v1alpha1',
        kind: 'PostgresPolicy',
        name: owner.name,
        uid: owner.uid,
        controller: true,
      },
    ];
    const send = async (name: string, epoch: number | undefined): Promise<void> => {
      const command: K8sCommandV1 = {
        v: 1,
        command: 'apply-resource',
        target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: stack.namespace, name },
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, ownerReferences },
          data: { probe: name },
        },
        idempotencyKey: `failover-test/${name}`,
        ...(epoch === undefined ? {} : { fence: { lease: 'planner', epoch } }),
      };
      await publisher.publish(
        k8sCommandContract,
        k8sCommandSubject('planner', 'apply-resource'),
        command,
        command.idempotencyKey,
      );
    };
    // Every acquisition raised the epoch: the killed leader's is below the standby's current one.
    const lease = await readLease(await openLeaseBucket(nats), 'planner');
    const current = lease!.record.epoch;
    expect(lease!.record.holder).toBe(
      planners.find((p) => p.child.exitCode === null && p.child.signalCode === null)!.identity,
    );
    await send('fenced-probe-sql', current - 1);
    await send('current-probe-sql', current);
    await send('unfenced-probe-sql', undefined);
    // Commands are applied in order: once the last exists, the first was handled before it.
    await waitFor('the unfenced probe applied', () =>
      stack.core.readNamespacedConfigMap({ name: 'unfenced-probe-sql', namespace: stack.namespace }).then(
        () => true,
        () => false,
      ),
    );
    await expect(
      stack.core.readNamespacedConfigMap({ name: 'current-probe-sql', namespace: stack.namespace }),
    ).resolves.toMatchObject({ data: { probe: 'current-probe-sql' } });
    await expect(
      stack.core.readNamespacedConfigMap({ name: 'fenced-probe-sql', namespace: stack.namespace }),
    ).rejects.toMatchObject({ code: 404 });
  } finally {
    await nats.close();
  }
}, 60_000);
