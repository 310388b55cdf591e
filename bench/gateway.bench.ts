// `npm run bench -- gateway`: the k8s-gateway as its own process (API emulator in this process, a private
// nats-server), fed N commands of each kind of the fleet's mix through NATS (bench/gateway-commands.ts) and
// N objects written directly to the API for its watch path. Reports the gateway process's CPU per command by
// kind and per watch event published, beside a floor measured in the same run: the same API requests made
// from one Node process with plain fetch, and a raw watch published to JetStream (bench/gateway-floor.ts).
// -> bench/results/gateway.json. Options: --commands N (default 300), --label <text> (stored with the result),
// --before <file>... (earlier result files whose figures are kept beside this run's; last option).
// BENCH_CPU_PROF=<dir> writes the gateway's CPU profile there when it stops.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamPublisher,
  RESOURCE_KINDS,
  SPINE_CONSUMERS,
  SUBJECTS,
  encodePayload,
  resyncRequestContract,
  k8sCommandContract,
  k8sCommandSubject,
  type K8sCommandSender,
  type K8sCommandV1,
} from '@rolepolicy/contracts';
import { API_VERSION, GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import {
  COMMAND_KINDS,
  FleetCommands,
  policySpec,
  type BenchPolicy,
  type CommandKind,
} from './gateway-commands.js';
import { runGatewayFloor, type FloorInput, type FloorResult } from './gateway-floor.js';
import { writeResult } from './pg-bench-support.js';
import { startProductProcesses, type ProductProcesses } from './service-processes.js';

const NAMESPACE = 'bench';
const FLOOR_NAMESPACE = 'floor';
const WARM_NAMESPACE = 'warm';
const RESOURCE_ROOT = 'rp.resource';

/** The sender of each kind, as in the fleet: the executor writes Applying, the planner the rest. */
const SENDER: Record<CommandKind, K8sCommandSender> = {
  'apply-plan': 'planner',
  'apply-configmap': 'planner',
  'patch-plan-status': 'executor',
  'patch-policy-status': 'planner',
  'record-event': 'planner',
};

function numberArg(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i < 0 ? fallback : Number(args[i + 1]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the resource events the gateway publishes about one namespace, and the resync markers. */
class ResourceEvents {
  private readonly byNamespace = new Map<string, number>();
  lastAt = performance.now();

  constructor(nc: NatsConnection) {
    nc.subscribe(`${RESOURCE_ROOT}.>`, {
      callback: (_err, msg) => {
        const namespace = msg.subject.split('.')[3] ?? '';
        this.byNamespace.set(namespace, (this.byNamespace.get(namespace) ?? 0) + 1);
        this.lastAt = performance.now();
      },
    });
  }

  /** Events published so far about objects in `namespace`. */
  in(namespace: string): number {
    return this.byNamespace.get(namespace) ?? 0;
  }

  /** Resolves once `done()` holds and nothing was published for `quietMs`. */
  async settled(done: () => boolean, quietMs = 500, timeoutMs = 300_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!(done() && performance.now() - this.lastAt >= quietMs)) {
      if (performance.now() > deadline) throw new Error('the gateway did not settle');
      await sleep(50);
    }
  }
}

/** Resolves once the gateway leads: it answers a resync request only then, after its first LISTs. */
async function leading(nc: NatsConnection): Promise<void> {
  const request = encodePayload(resyncRequestContract, { v: 1, kinds: [...RESOURCE_KINDS] });
  const deadline = performance.now() + 60_000;
  for (;;) {
    try {
      await nc.request(SUBJECTS.resyncRequest, request, { timeout: 2_000 });
      return;
    } catch (err) {
      if (performance.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

type Api = { readonly custom: CustomObjectsApi; readonly core: CoreV1Api };

async function createPolicies(api: Api, namespace: string, n: number): Promise<BenchPolicy[]> {
  const plural = KIND_NAMES.PostgresPolicy.plural;
  const out: BenchPolicy[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) {
        const i = next++;
        const created = (await api.custom.createNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          plural,
          namespace,
          body: {
            apiVersion: API_VERSION,
            kind: 'PostgresPolicy',
            metadata: { name: `fleet-${i}` },
            spec: policySpec(i),
          },
        })) as { metadata: { uid: string } };
        out[i] = { namespace, name: `fleet-${i}`, uid: created.metadata.uid };
      }
    }),
  );
  return out;
}

/** Publishes the commands and resolves once the gateway's consumer has settled every one of them. */
async function sendAndWait(
  nc: NatsConnection,
  kind: CommandKind,
  commands: readonly K8sCommandV1[],
): Promise<void> {
  const publisher = new JetStreamPublisher(nc);
  const def = SPINE_CONSUMERS['k8s-gateway'][0]!;
  const jsm = await jetstreamManager(nc);
  let last = 0;
  for (const c of commands) {
    const receipt = await publisher.publish(
      k8sCommandContract,
      k8sCommandSubject(SENDER[kind], c.command),
      c,
      c.idempotencyKey,
    );
    last = Math.max(last, Number(receipt.seq ?? 0));
  }
  for (;;) {
    const info = await jsm.consumers.info(def.stream, def.durable);
    if (info.num_pending === 0 && info.num_ack_pending === 0 && info.ack_floor.stream_seq >= last) return;
    await sleep(50);
  }
}

/** Fails unless the API shows every command of `kind` applied. */
async function verify(api: Api, namespace: string, kind: CommandKind, n: number): Promise<void> {
  const plans = (await api.custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: KIND_NAMES.PostgresPolicyPlan.plural,
    namespace,
  })) as { items: { status?: { phase?: string } }[] };
  const count: Record<CommandKind, () => Promise<number>> = {
    'apply-plan': async () => plans.items.filter((p) => p.status?.phase === 'Approved').length,
    'apply-configmap': async () =>
      (await api.core.listNamespacedConfigMap({ namespace })).items.filter((c) =>
        c.metadata?.name?.endsWith('-review'),
      ).length,
    'patch-plan-status': async () => plans.items.filter((p) => p.status?.phase === 'Applying').length,
    'patch-policy-status': async () =>
      (
        (await api.custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          plural: KIND_NAMES.PostgresPolicy.plural,
          namespace,
        })) as { items: { status?: { current_plan_ref?: unknown } }[] }
      ).items.filter((p) => p.status?.current_plan_ref !== undefined).length,
    'record-event': async () =>
      (await api.core.listNamespacedEvent({ namespace })).items.filter((e) => e.reason === 'PlanApplied')
        .length,
  };
  const applied = await count[kind]();
  if (applied !== n) throw new Error(`${kind}: ${applied} of ${n} commands applied`);
}

/** Runs the floor process; `created` creates the policies it watches once it says it is ready. */
async function runFloor(
  script: string,
  input: FloorInput,
  created: () => Promise<readonly BenchPolicy[]>,
): Promise<FloorResult> {
  const child = spawn(process.execPath, [...process.execArgv, script, 'gateway', '--floor'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.write(`${JSON.stringify(input)}\n`);
  let last = '';
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'ready') child.stdin.write(`${JSON.stringify(await created())}\n`);
    else last = line;
  }
  return JSON.parse(last) as FloorResult;
}

const round = (x: number): number => Math.round(x);

type PerCommand = { us: number; watchEvents: number; usWithoutEvents: number };

/** What the bench needs to drive and watch the gateway. */
type Driver = {
  readonly api: Api;
  readonly nc: NatsConnection;
  readonly events: ResourceEvents;
  /** The gateway's CPU used since `start` at `from`, less its idle rate, in µs. */
  readonly used: (start: number, from: number) => number;
  readonly cpu: () => number;
};

/** Creates `n` policies directly in the API and returns them with the gateway's CPU per watch event. */
async function watchRound(d: Driver, namespace: string, n: number) {
  const start = d.cpu();
  const from = performance.now();
  const policies = await createPolicies(d.api, namespace, n);
  await d.events.settled(() => d.events.in(namespace) >= n);
  const watchEvents = d.events.in(namespace);
  return { policies, watchEvents, usPerWatchEvent: d.used(start, from) / watchEvents };
}

/** Sends one command of each kind per policy, kind after kind, and measures each kind. */
async function commandRound(d: Driver, policies: readonly BenchPolicy[], usPerWatchEvent: number) {
  const n = policies.length;
  const namespace = policies[0]!.namespace;
  const fleet = new FleetCommands();
  const planUids = new Map<string, string>();
  const perCommand = {} as Record<CommandKind, PerCommand>;
  for (const kind of COMMAND_KINDS) {
    const commands = policies.map((p, i) => fleet.command(kind, p, i, planUids.get(p.uid)));
    const before = d.events.in(namespace);
    const start = d.cpu();
    const from = performance.now();
    await sendAndWait(d.nc, kind, commands);
    await d.events.settled(() => true);
    const used = d.used(start, from);
    await verify(d.api, namespace, kind, n);
    const published = d.events.in(namespace) - before;
    perCommand[kind] = {
      us: round(used / n),
      watchEvents: Math.round((published / n) * 100) / 100,
      usWithoutEvents: round((used - published * usPerWatchEvent) / n),
    };
    if (kind === 'apply-plan') {
      const plans = (await d.api.custom.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        plural: KIND_NAMES.PostgresPolicyPlan.plural,
        namespace,
      })) as { items: { metadata: { uid: string; ownerReferences: { uid: string }[] } }[] };
      for (const plan of plans.items) planUids.set(plan.metadata.ownerReferences[0]!.uid, plan.metadata.uid);
    }
  }
  return perCommand;
}

/** Measures the gateway on N commands of each kind and N directly written objects, after a warm-up round. */
async function measureGateway(product: ProductProcesses, n: number, warm: number, script: string) {
  const api: Api = {
    custom: product.emulator.kubeConfig().makeApiClient(CustomObjectsApi),
    core: product.emulator.kubeConfig().makeApiClient(CoreV1Api),
  };
  const nc = await connect({ servers: product.nats.url });
  const events = new ResourceEvents(nc);
  const cpu = (): number => (product.cpuSeconds()['k8s-gateway'] ?? 0) * 1e6;
  await leading(nc);
  // The start-up's tail (first LISTs published, validators compiled) is not idle: wait for a quiet second.
  for (let i = 0; i < 30; i++) {
    const before = cpu();
    await sleep(1_000);
    if (cpu() - before < 30_000) break;
  }
  const idleStart = cpu();
  const idleFrom = performance.now();
  await sleep(3_000);
  const idleUsPerMs = (cpu() - idleStart) / (performance.now() - idleFrom);
  const used = (start: number, from: number): number =>
    cpu() - start - idleUsPerMs * (performance.now() - from);
  const d: Driver = { api, nc, events, used, cpu };
  // Warm-up: the JIT and the connections, as in a gateway that has been running.
  const warmed = await watchRound(d, WARM_NAMESPACE, warm);
  await commandRound(d, warmed.policies, warmed.usPerWatchEvent);
  const { policies, watchEvents, usPerWatchEvent } = await watchRound(d, NAMESPACE, n);
  const perCommand = await commandRound(d, policies, usPerWatchEvent);
  for (const kind of COMMAND_KINDS) console.log(`gateway ${kind}: ${JSON.stringify(perCommand[kind])}`);
  // Idle again, once everything settled: what the gateway costs per second with nothing to do.
  const idleEndStart = cpu();
  const idleEndFrom = performance.now();
  await sleep(5_000);
  const idleEndUsPerMs = (cpu() - idleEndStart) / (performance.now() - idleEndFrom);
  const floor = await runFloor(
    script,
    {
      apiUrl: product.emulator.url,
      natsUrl: product.nats.url,
      namespace: FLOOR_NAMESPACE,
      count: n + warm,
      warm,
      resourceRoot: RESOURCE_ROOT,
    },
    () => createPolicies(api, FLOOR_NAMESPACE, n + warm),
  );
  await nc.close();
  return {
    idleUsPerSecond: round(idleUsPerMs * 1000),
    idleAfterUsPerSecond: round(idleEndUsPerMs * 1000),
    watchEvents,
    usPerWatchEvent: round(usPerWatchEvent),
    perCommand,
    floor,
  };
}

/** The figures of earlier result files named after `--before` (each its own argument). */
function beforeRuns(args: readonly string[]): unknown[] | undefined {
  const at = args.indexOf('--before');
  if (at < 0) return undefined;
  const files = args
    .slice(at + 1)
    .filter((_, i, all) => !all.slice(0, i + 1).some((a) => a.startsWith('--')));
  return files.map((file) => {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    return {
      label: r['label'],
      measuredAt: r['measuredAt'],
      gateway: r['gateway'],
      floor: r['floor'],
      ratio: r['ratio'],
    };
  });
}

/** Runs the gateway benchmark (or, with `--floor`, its floor process). */
export async function runGatewayBench(script: string, args: readonly string[]): Promise<void> {
  if (args.includes('--floor')) {
    await runGatewayFloor();
    return;
  }
  const n = numberArg(args, '--commands', 300);
  const labelAt = args.indexOf('--label');
  const product = await startProductProcesses({ executors: 0, namespace: NAMESPACE, only: ['k8s-gateway'] });
  let measured: Awaited<ReturnType<typeof measureGateway>>;
  try {
    measured = await measureGateway(product, n, Math.min(100, n), script);
  } finally {
    await product.stop();
  }
  const { perCommand, floor } = measured;
  const ratio = Object.fromEntries(
    COMMAND_KINDS.map((k) => [
      k,
      Math.round((perCommand[k].usWithoutEvents / floor.usPerCommand[k]) * 10) / 10,
    ]),
  );
  // One policy's share of this mix: one command of each kind and the watch events they caused.
  const mixUs = COMMAND_KINDS.reduce((sum, k) => sum + perCommand[k].us, 0);
  const mixEvents = COMMAND_KINDS.reduce((sum, k) => sum + perCommand[k].watchEvents, 0);
  const floorMixUs =
    COMMAND_KINDS.reduce((sum, k) => sum + floor.usPerCommand[k], 0) + mixEvents * floor.usPerWatchEvent;
  const report = {
    benchmark: 'gateway',
    label: labelAt < 0 ? undefined : args[labelAt + 1],
    measuredAt: new Date().toISOString(),
    commandsPerKind: n,
    description:
      'k8s-gateway process CPU (µs, /proc utime+stime, idle rate subtracted) per command of each kind of the fleet mix ' +
      '(us: with the watch events it caused; usWithoutEvents: less those events at usPerWatchEvent) and per watch ' +
      'event published (objects written directly to the API); floor: one Node process making the same API ' +
      'requests with fetch, and a raw watch published to JetStream, in the same run.',
    gateway: {
      idleUsPerSecond: measured.idleUsPerSecond,
      idleAfterUsPerSecond: measured.idleAfterUsPerSecond,
      usPerWatchEvent: measured.usPerWatchEvent,
      perCommand,
      mixUsPerPolicy: round(mixUs),
      watchEventsPerPolicyMix: Math.round(mixEvents * 100) / 100,
    },
    floor: { ...floor, mixUsPerPolicy: round(floorMixUs) },
    ratio: {
      perCommand: ratio,
      watchEvent: Math.round((measured.usPerWatchEvent / floor.usPerWatchEvent) * 10) / 10,
      mix: Math.round((mixUs / floorMixUs) * 10) / 10,
    },
    loadAverage: (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10),
    // --before <file>...: earlier results of this bench (e.g. on the code before a change), kept beside it.
    before: beforeRuns(args),
  };
  console.log(JSON.stringify(report, null, 2));
  writeResult('gateway', report);
}
