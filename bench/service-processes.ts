// The product as separate processes for the fleet benchmark: a private nats-server, the API emulator
// in this process, and each service (inspector, executors, planner, k8s-gateway) as its own Node
// process from dist/, so each one's peak RSS (VmHWM) is its own and they share the cores as in a cluster.
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
  stop(): Promise<void>;
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
}): Promise<ProductProcesses> {
  const nats = await startPrivateNatsServer();
  const emulator = await startEmulator({ crdDir: CRD_DIR });
  const services: ServiceProcess[] = [];
  const names = [
    'inspector',
    ...Array.from({ length: options.executors }, () => 'executor'),
    'planner',
    'k8s-gateway',
  ].filter((name) => options.only === undefined || options.only.includes(name));
  const stop = async (): Promise<void> => {
    // The k8s-gateway last: the others hand over through it when they stop (the planner's last commands,
    // lease release); stopped first, it left the planner waiting past the grace period (no CPU profile).
    const gatewayLast = [...services]
      .reverse()
      .sort((a, b) => Number(a.name === 'k8s-gateway') - Number(b.name === 'k8s-gateway'));
    for (const s of gatewayLast) {
      if (s.child.exitCode !== null) continue;
      const exited = new Promise((resolve) => s.child.once('exit', resolve));
      s.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
    }
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
    // Generous: on a shared 2-core machine at load average 40-60 the services took over three minutes to start.
    for (const s of services) await ready(s.url, 600_000);
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
    stop,
  };
}
