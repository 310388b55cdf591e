// The fleet's spine floor (issue 28): after a fleet stage, the same transport work per policy with no product
// logic, so the services' CPU per converged policy can be read against what the decided architecture (a
// JetStream spine, the k8s-gateway as the only API writer, every service's ResourceCache following the
// resource stream; docs/architecture.md) costs by itself. In three phases, each in processes of its own on a
// private nats-server and a fresh API emulator in this process (its CPU reported apart, as in the stage):
// - messaging: the stage's JetStream messages by subject (each published with a stream ack, delivered to a
//   durable pull consumer, parsed, acked) and its core NATS requests and publishes (replied with copies of
//   the stage's replies);
// - cache deliveries: the stage's resource events by kind published to a stream like RP_RESOURCES (one event
//   a subject, so none replaces another before every follower has it), and delivered to one follower process per service that follows the kind (the planner, each
//   executor), each with an ordered consumer per kind it follows, as a ResourceCache has;
// - API writes: the stage's writes by verb and resource, with bodies copied from the stage's objects.
// Where each count comes from, and what is left out, is said beside it below.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { AckPolicy, RetentionPolicy, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startEmulator, startPrivateNatsServer } from '@rolepolicy/testing';

import { benchCpuSeconds } from './cpu-time.js';
import { round } from './pg-bench-support.js';
import type { ApiObject, StageTraffic } from './spine-capture.js';
import { floorCounts, replyKey, resourceKey } from './spine-counts.js';
import type { Traffic, WorkerTask } from './spine-floor-worker.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CRD_DIR = fileURLToPath(new URL('../../deploy/crds', import.meta.url));
const WORKER = fileURLToPath(new URL('./spine-floor-worker.js', import.meta.url));
const NAMESPACE = 'bench';
const WORK_STREAM = 'FLOOR_WORK';
const RESOURCE_STREAM = 'FLOOR_RESOURCES';

/** What a fleet stage did, as the floor repeats it. */
export interface StageShape {
  readonly executors: number;
  readonly policies: number;
  /** JetStream messages the services handled by subject, stage totals (rp_messages_handled_total). */
  readonly handled: ReadonlyMap<string, number>;
  readonly traffic: StageTraffic;
  /** API writes by verb and resource, stage totals (fleet-health.ts's ApiWriteCounter). */
  readonly apiWrites: ReadonlyMap<string, number>;
  /** One object of each resource written (spine-capture.ts's stageTemplates). */
  readonly templates: Record<string, ApiObject>;
}

/** The floor's figures; CPU of the floor's processes only, ms per policy. */
export interface SpineFloor {
  readonly perPolicy: Record<string, Record<string, number>>;
  readonly leftOut: Record<string, string>;
  readonly meanPayloadBytes: Record<string, number>;
  readonly seconds: Record<string, number>;
  readonly cpuMsPerPolicy: { messaging: number; cacheDeliveries: number; apiWrites: number; total: number };
  readonly cpuMsPerPolicyByProcess: Record<string, number>;
  /**
   * CPU ms of one unit of each part (a message sent and handled; a resource event published, over its
   * deliveries; an API write), to price other counts than the stage's (the 5 API writes, say).
   */
  readonly cpuMsPerUnit: { message: number; cacheDelivery: number; apiWrite: number };
  /** The API emulator's (this process's) CPU during the API writes, not counted in the floor. */
  readonly apiEmulatorCpuMsPerPolicy: number;
}

const floorSubject = (subject: string): string => `floor.${subject.slice(subject.indexOf('.') + 1)}`;

type Done = { type: 'done'; cpuMs: number; seconds: number };

/** Forks one worker with its task; resolves once it is ready, with a `go` that resolves when it is done. */
async function worker(
  task: WorkerTask,
  children: ChildProcess[],
): Promise<{ go: () => Promise<Done>; child: ChildProcess }> {
  const child = fork(WORKER, [], {
    execArgv: ['--import', `${ROOT}/tools/register-aliases.mjs`],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  type Reply = { type: string; message?: string } & Partial<Done>;
  const next = (): Promise<Reply> =>
    new Promise((resolve, reject) => {
      child.once('message', (m) => resolve(m as Reply));
      child.once('exit', (code) => reject(new Error(`a spine floor ${task.role} exited with ${code}`)));
    });
  const check = <T extends { type: string; message?: string }>(m: T): T => {
    if (m.type === 'failed') throw new Error(`spine floor ${task.role}: ${m.message}`);
    return m;
  };
  child.send(task);
  check(await next());
  return {
    child,
    go: async () => {
      const done = next();
      child.send('go');
      return check(await done) as Done;
    },
  };
}

/** A phase that takes longer has lost messages (a count the floor cannot reach): it fails instead of hanging. */
const PHASE_TIMEOUT_MS = 10 * 60_000;

/** Runs one phase's workers: all set up, then all go; CPU ms by process label and the longest wall time. */
async function phase(
  tasks: readonly [string, WorkerTask][],
): Promise<{ cpuMs: Record<string, number>; seconds: number }> {
  const children: ChildProcess[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`a spine floor phase did not finish in ${PHASE_TIMEOUT_MS / 1000} s`)),
      PHASE_TIMEOUT_MS,
    );
  });
  try {
    const run = async () => {
      const started = await Promise.all(tasks.map(([, task]) => worker(task, children)));
      return Promise.all(started.map((w) => w.go()));
    };
    const done = await Promise.race([run(), timeout]);
    return {
      cpuMs: Object.fromEntries(tasks.map(([label], i) => [label, done[i]!.cpuMs])),
      seconds: Math.max(...done.map((d) => d.seconds)),
    };
  } finally {
    clearTimeout(timer);
    // Every worker this phase forked, also when one failed or the phase timed out: none is left behind.
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

function traffic(shape: StageShape, key: string, subject: string, total: number, request = false): Traffic {
  const { payloads } = shape.traffic;
  return {
    subject,
    total,
    samples: payloads.samples(key),
    ...(request ? { request, replies: payloads.samples(replyKey(key)) } : {}),
  };
}

/** Measures the spine floor of one stage (call it after the stage's product has stopped). */
export async function spineFloor(shape: StageShape): Promise<SpineFloor> {
  const counts = floorCounts(shape);
  const nats = await startPrivateNatsServer();
  const emulator = await startEmulator({ crdDir: CRD_DIR });
  try {
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    const twoMinutes = 120 * 1e9;
    await jsm.streams.add({
      name: WORK_STREAM,
      subjects: ['floor.k8s.cmd.>', 'floor.execute.>'],
      retention: RetentionPolicy.Workqueue,
      duplicate_window: twoMinutes,
    });
    await jsm.consumers.add(WORK_STREAM, {
      durable_name: 'floor-work',
      ack_policy: AckPolicy.Explicit,
      max_ack_pending: 256,
    });
    await jsm.streams.add({
      name: RESOURCE_STREAM,
      subjects: ['floor.resource.>'],
      max_msgs_per_subject: 1,
      duplicate_window: twoMinutes,
    });
    await nc.close();
    const url = nats.url;
    const { policies } = shape;
    const js = counts.jetStream.map(([s, n]) => traffic(shape, s, floorSubject(s), n));
    const core = counts.core.map(([s, n]) =>
      traffic(shape, s, floorSubject(s), n, shape.traffic.requests.has(s)),
    );
    const messaging = await phase([
      [
        'receiver',
        {
          role: 'receiver',
          url,
          stream: WORK_STREAM,
          durable: 'floor-work',
          jetStreamTotal: js.reduce((a, t) => a + t.total, 0),
          core,
        },
      ],
      ['sender', { role: 'sender', url, policies, jetStream: js, core }],
    ]);
    const kinds = Object.entries(counts.resources).map(([kind, n]) =>
      traffic(shape, resourceKey(kind), kind, n),
    );
    const cache = await phase([
      ...counts.followers.map(
        (f) =>
          [
            `follower ${f.name}`,
            {
              role: 'follower',
              url,
              stream: RESOURCE_STREAM,
              kinds: f.kinds,
              total: kinds.filter((k) => f.kinds.includes(k.subject)).reduce((a, k) => a + k.total, 0),
            },
          ] as [string, WorkerTask],
      ),
      ['resource publisher', { role: 'resource-publisher', url, policies, kinds }],
    ]);
    const emulatorBefore = benchCpuSeconds().own;
    const api = await phase([
      [
        'writer',
        {
          role: 'writer',
          kubeconfig: emulator.kubeconfigPath,
          namespace: NAMESPACE,
          policies,
          writes: [...counts.api.writes],
          templates: shape.templates,
        },
      ],
    ]);
    const emulatorMs = (benchCpuSeconds().own - emulatorBefore) * 1000;
    return report(shape, counts, { messaging, cache, api }, emulatorMs);
  } finally {
    await nats.dispose();
    await emulator.stop();
  }
}

type Phase = { cpuMs: Record<string, number>; seconds: number };

function report(
  shape: StageShape,
  counts: ReturnType<typeof floorCounts>,
  phases: { messaging: Phase; cache: Phase; api: Phase },
  emulatorMs: number,
): SpineFloor {
  const p = shape.policies;
  const perPolicy = (entries: Iterable<readonly [string, number]>): Record<string, number> =>
    Object.fromEntries([...entries].map(([k, n]) => [k, round(n / p)]));
  const sum = (phase: Phase): number => Object.values(phase.cpuMs).reduce((a, b) => a + b, 0) / p;
  const cpu = {
    messaging: round(sum(phases.messaging)),
    cacheDeliveries: round(sum(phases.cache)),
    apiWrites: round(sum(phases.api)),
  };
  const total = (entries: Iterable<readonly [string, number]>): number =>
    [...entries].reduce((a, [, n]) => a + n, 0);
  const per = (phase: Phase, units: number): number =>
    units === 0 ? 0 : Math.round((sum(phase) * p * 1000) / units) / 1000;
  const { payloads } = shape.traffic;
  return {
    perPolicy: {
      jetStreamMessages: perPolicy(counts.jetStream),
      coreMessages: perPolicy(counts.core),
      resourceEvents: perPolicy(Object.entries(counts.resources)),
      cacheDeliveries: perPolicy(Object.entries(counts.deliveries)),
      apiWrites: perPolicy(counts.api.writes),
    },
    leftOut: counts.leftOut,
    meanPayloadBytes: Object.fromEntries(payloads.keys().map((k) => [k, payloads.meanBytes(k)])),
    seconds: {
      messaging: round(phases.messaging.seconds),
      cacheDeliveries: round(phases.cache.seconds),
      apiWrites: round(phases.api.seconds),
    },
    cpuMsPerPolicy: { ...cpu, total: round(cpu.messaging + cpu.cacheDeliveries + cpu.apiWrites) },
    cpuMsPerPolicyByProcess: Object.fromEntries(
      Object.entries({ ...phases.messaging.cpuMs, ...phases.cache.cpuMs, ...phases.api.cpuMs }).map(
        ([k, ms]) => [k, round(ms / p)],
      ),
    ),
    cpuMsPerUnit: {
      message: per(phases.messaging, total(counts.jetStream) + total(counts.core)),
      cacheDelivery: per(phases.cache, total(Object.entries(counts.deliveries))),
      apiWrite: per(phases.api, total(counts.api.writes)),
    },
    apiEmulatorCpuMsPerPolicy: round(emulatorMs / p),
  };
}
