// The product as separate processes for the fleet and ephemeral benchmarks: a private nats-server, the API
// emulator in this process, and each service (inspector, executors, planner, k8s-gateway, and on request the
// access-scheduler) as its own Node process from dist/, so each one's peak RSS (VmHWM) and CPU time are its
// own and they share the cores as in a cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import {
  inspectSealEnv,
  freePort,
  startEmulator,
  startPrivateNatsServer,
  type Emulator,
  type PrivateNatsServer,
} from '@rolepolicy/testing';

import { processCpuSeconds } from './cpu-time.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CRD_DIR = fileURLToPath(new URL('../../deploy/crds', import.meta.url));

/** One service process. */
export type ServiceProcess = {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
};

/** A running product; {@link ProductProcesses.stop} ends everything it started. */
export type ProductProcesses = {
  readonly nats: PrivateNatsServer;
  readonly emulator: Emulator;
  readonly services: readonly ServiceProcess[];
  /** Peak resident set (MiB) of each service process so far, keyed by `<name>` or `executor-<i>`. */
  peakRssMiB(): Record<string, number>;
  /** CPU seconds of each service process so far, keyed as {@link ProductProcesses.peakRssMiB}. */
  cpuSeconds(): Record<string, number>;
  /** Stops the service processes only (the k8s-gateway last), keeping NATS and the emulator. */
  stopServices(): Promise<void>;
  stop(): Promise<void>;
};

/** The access-scheduler's own settings: its BullMQ timers' Redis and key prefix. */
export type AccessSchedulerSettings = {
  readonly redisUrl: string;
  readonly redisPrefix: string;
};

function peakRss(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? 0 : Math.round((Number(kb) / 1024) * 10) / 10;
  } catch {
    return 0;
  }
}

/** One figure per service, keyed by `<name>` or `executor-<i>`. */
function byService(
  services: readonly ServiceProcess[],
  figure: (s: ServiceProcess) => number,
): Record<string, number> {
  const out: Record<string, number> = {};
  let executor = 0;
  for (const s of services) out[s.name === 'executor' ? `executor-${executor++}` : s.name] = figure(s);
  return out;
}

async function ready(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/readyz did not answer 200 within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Starts NATS, the emulator and the services; `env` is added to every service's environment. */
export async function startProductProcesses(options: {
  readonly executors: number;
  readonly namespace: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Each service logs at level log to `<logDir>/<service>.log` (default: BENCH_LOG_DIR, else no logs). */
  readonly logDir?: string;
  /** Only these services (default: all of them, in start order). */
  readonly only?: readonly string[];
  /**
   * Also starts the access-scheduler, last, with these settings (the fleet benchmarks run without it: no
   * Redis, and no ephemeral access to schedule).
   */
  readonly accessScheduler?: AccessSchedulerSettings;
}): Promise<ProductProcesses> {
  const nats = await startPrivateNatsServer();
  const emulator = await startEmulator({ crdDir: CRD_DIR });
  const services: ServiceProcess[] = [];
  const names = [
    'inspector',
    ...Array.from({ length: options.executors }, () => 'executor'),
    'planner',
    'k8s-gateway',
    ...(options.accessScheduler === undefined ? [] : ['access-scheduler']),
  ].filter((name) => options.only === undefined || options.only.includes(name));
  // Only the access-scheduler reads these, as in deploy/base/access-scheduler.yaml.
  const ownEnv = (name: string): Record<string, string> =>
    name === 'access-scheduler' && options.accessScheduler !== undefined
      ? {
          REDIS_URL: options.accessScheduler.redisUrl,
          ACCESS_SCHEDULER_REDIS_PREFIX: options.accessScheduler.redisPrefix,
        }
      : {};
  const stopServices = async (): Promise<void> => {
    // The k8s-gateway last: the others hand over through it when they stop (the planner's last commands,
    // lease release); stopped first, it left the planner waiting past the grace period (no CPU profile).
    const gatewayLast = [...services]
      .reverse()
      .sort((a, b) => Number(a.name === 'k8s-gateway') - Number(b.name === 'k8s-gateway'));
    for (const s of gatewayLast) {
      // Gone already (an earlier stopServices, a crash): its exit event will not come again.
      if (s.child.exitCode !== null || s.child.signalCode !== null) continue;
      const exited = new Promise((resolve) => s.child.once('exit', resolve));
      s.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
    }
  };
  const stop = async (): Promise<void> => {
    await stopServices();
    await nats.dispose();
    await emulator.stop();
  };
  const logDir = options.logDir ?? process.env['BENCH_LOG_DIR'];
  try {
    for (const name of names) {
      const port = await freePort();
      const child = spawn(
        process.execPath,
        [
          // BENCH_CPU_PROF=<dir>: each service writes a V8 CPU profile there when it stops.
          ...(process.env['BENCH_CPU_PROF']
            ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`]
            : []),
          '--import',
          `${ROOT}/tools/register-aliases.mjs`,
          `${ROOT}/dist/apps/${name}/src/main.js`,
        ],
        {
          cwd: ROOT,
          // BENCH_LOG_DIR=<dir>: each service logs at level log to <dir>/<service>.log (passes, decisions).
          stdio: ['ignore', logDir === undefined ? 'ignore' : 'pipe', 'inherit'],
          env: {
            ...process.env,
            NATS_URL: nats.url,
            HTTP_HOST: '127.0.0.1',
            HTTP_PORT: String(port),
            LOG_LEVEL: logDir === undefined ? 'error' : 'log',
            KUBECONFIG: emulator.kubeconfigPath,
            LEASE_NAMESPACE: options.namespace,
            ...inspectSealEnv(),
            ...ownEnv(name),
            ...options.env,
          },
        },
      );
      if (logDir !== undefined) {
        const executorIndex = services.filter((s) => s.name === 'executor').length;
        const file = name === 'executor' ? `executor-${executorIndex}` : name;
        child.stdout?.pipe(createWriteStream(`${logDir}/${file}.log`));
      }
      services.push({ name, url: `http://127.0.0.1:${port}`, child });
    }
    // BENCH_READY_TIMEOUT_MS: how long each service may take to answer /readyz; three minutes by default, as
    // on the shared 2-CPU machine (load 30+) a service's start-up alone outlasted one minute.
    const readyMs = Number(process.env['BENCH_READY_TIMEOUT_MS'] ?? 180_000);
    for (const s of services) await ready(s.url, readyMs);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nats,
    emulator,
    services,
    peakRssMiB: () => byService(services, (s) => peakRss(s.child.pid)),
    cpuSeconds: () => byService(services, (s) => processCpuSeconds(s.child.pid)),
    stopServices,
    stop,
  };
}
