// `npm run demo`: checks the local PostgreSQL, NATS and Redis, starts the embedded Kubernetes API emulator
// with the project's CRDs, boots the five services as child processes against it, prints each one's health
// and metrics URL, then runs the reconcile loop (tools/demo-loop.ts) and keeps everything running until
// Ctrl-C (`--exit-when-healthy` stops before the loop, `--exit-when-done` after it).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { FALLBACK_POSTGRES_MAJOR, postgresAdminUrl, startEmulator, type Emulator } from '@rolepolicy/testing';
import { runDemoLoop, type DemoCleanup } from './demo-loop.js';

/** The five services in start order, with their offset from the HTTP port base. */
const SERVICES = ['k8s-gateway', 'inspector', 'planner', 'executor', 'access-scheduler'] as const;
type Service = (typeof SERVICES)[number];

/**
 * NATS and Redis on their default ports; when absent, the demo starts `nats-server` / `redis-server` from
 * the PATH (PostgreSQL has an embedded fallback instead: see checkDependencies).
 */
const BROKERS = [
  {
    name: 'NATS (JetStream)',
    port: 4222,
    binary: 'nats-server',
    compose: 'nats',
    apt: 'nats-server',
    args: (dir: string) => ['-js', '-a', '127.0.0.1', '-p', '4222', '-sd', dir],
  },
  {
    name: 'Redis',
    port: 6379,
    binary: 'redis-server',
    compose: 'redis',
    apt: 'redis-server',
    args: (dir: string) => [
      '--bind',
      '127.0.0.1',
      '--port',
      '6379',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
  },
] as const;

const here = path.dirname(fileURLToPath(import.meta.url));
// Run from dist/tools/demo.js the services are dist/apps/*/src/main.js; run from source, main.ts.
const extension = path.extname(fileURLToPath(import.meta.url));

type Options = {
  readonly exitWhenHealthy: boolean;
  readonly exitWhenDone: boolean;
  /** Bound of each loop step (convergence, a plan appearing, an approval applying). */
  readonly stepTimeoutMs: number;
  readonly portBase: number;
  readonly host: string;
  /** How long to wait for every /readyz; 30 s by default, longer for tests on a loaded CI machine. */
  readonly healthDeadlineMs: number;
};

function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): Options {
  const portBase = Number(env['DEMO_HTTP_PORT_BASE'] ?? '8081');
  if (!Number.isInteger(portBase) || portBase < 1 || portBase > 65530) {
    console.error('DEMO_HTTP_PORT_BASE must be a port number between 1 and 65530');
    process.exit(2);
  }
  const healthDeadlineMs = Number(env['DEMO_HEALTH_TIMEOUT_MS'] ?? '30000');
  if (!Number.isInteger(healthDeadlineMs) || healthDeadlineMs <= 0) {
    console.error('DEMO_HEALTH_TIMEOUT_MS must be a positive integer (milliseconds)');
    process.exit(2);
  }
  const stepTimeoutMs = Number(env['DEMO_STEP_TIMEOUT_MS'] ?? '60000');
  if (!Number.isInteger(stepTimeoutMs) || stepTimeoutMs <= 0) {
    console.error('DEMO_STEP_TIMEOUT_MS must be a positive integer (milliseconds)');
    process.exit(2);
  }
  return {
    healthDeadlineMs,
    stepTimeoutMs,
    exitWhenDone: argv.includes('--exit-when-done') || env['DEMO_EXIT_WHEN_DONE'] === '1',
    exitWhenHealthy: argv.includes('--exit-when-healthy') || env['DEMO_EXIT_WHEN_HEALTHY'] === '1',
    portBase,
    host: '127.0.0.1',
  };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Servers the demo started itself (NATS, Redis), stopped with the services. */
const ownServers: ChildProcess[] = [];

function onPath(binary: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, binary);
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function waitOpen(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await portOpen(port)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/**
 * PostgreSQL: the configured address (RP_TEST_PG_URL, default 127.0.0.1:5432), else an embedded server from
 * the pinned package. NATS and Redis: their default ports, else started from the PATH, else one line
 * naming what is missing and the two ways to get it.
 */
async function checkDependencies(): Promise<boolean> {
  const configured = process.env['RP_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const configuredPort = Number(new URL(configured).port || 5432);
  if (await portOpen(configuredPort)) {
    console.log(`  ok      PostgreSQL on 127.0.0.1:${configuredPort}`);
  } else {
    const url = new URL(await postgresAdminUrl('system'));
    console.log(
      `  started PostgreSQL ${FALLBACK_POSTGRES_MAJOR} (embedded, pinned npm package) on 127.0.0.1:${url.port}: nothing listened on 127.0.0.1:${configuredPort}`,
    );
  }
  for (const broker of BROKERS) {
    if (await portOpen(broker.port)) {
      console.log(`  ok      ${broker.name} on 127.0.0.1:${broker.port}`);
      continue;
    }
    const binary = onPath(broker.binary);
    if (binary === undefined) {
      console.error(
        `${broker.name} is not running on 127.0.0.1:${broker.port} and ${broker.binary} is not on the PATH: start it with \`docker compose up -d ${broker.compose}\` or install the OS package (\`apt-get install ${broker.apt}\`).`,
      );
      return false;
    }
    const dir = mkdtempSync(path.join(tmpdir(), `rp-demo-${broker.compose}-`));
    ownServers.push(spawn(binary, [...broker.args(dir)], { stdio: 'ignore' }));
    if (!(await waitOpen(broker.port, 10_000))) {
      console.error(`${broker.name}: ${binary} did not open 127.0.0.1:${broker.port} within 10 s`);
      return false;
    }
    console.log(`  started ${broker.name} on 127.0.0.1:${broker.port} (${binary})`);
  }
  return true;
}

/** The CRD manifests, found from source (tools/) and from the build (dist/tools/) alike. */
function crdDirectory(): string {
  const fromSource = path.resolve(here, '..', 'deploy', 'crds');
  return extension === '.ts' ? fromSource : path.resolve(here, '..', '..', 'deploy', 'crds');
}

function startService(service: Service, port: number, options: Options, kubeconfig: string): ChildProcess {
  const entry = path.resolve(here, '..', 'apps', service, 'src', `main${extension}`);
  const child = spawn(process.execPath, [...process.execArgv, entry], {
    env: {
      ...process.env,
      HTTP_HOST: options.host,
      HTTP_PORT: String(port),
      KUBECONFIG: kubeconfig,
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `[${service}] `;
  const relay = (stream: NodeJS.ReadableStream | null, out: NodeJS.WriteStream) => {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      // The service's own "up" line repeats its name; the table below says the same more compactly.
      for (const line of chunk.split('\n'))
        if (line.trim().length > 0 && !line.includes(' up: http')) out.write(`${prefix}${line}\n`);
    });
  };
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  return child;
}

type Health = { readonly healthz: number; readonly readyz: number; readonly checks: string };

async function health(base: string): Promise<Health | undefined> {
  try {
    const healthz = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
    const readyz = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) });
    const body = (await readyz.json()) as { readonly checks?: Readonly<Record<string, string>> };
    const checks = Object.entries(body.checks ?? {})
      .map(([name, state]) => `${name} ${state}`)
      .join(', ');
    return { healthz: healthz.status, readyz: readyz.status, checks };
  } catch {
    return undefined;
  }
}

/** Drops the demo database and roles; runs after the services stopped (they hold connections to it). */
let cleanupLoop: DemoCleanup = async () => undefined;

async function stopAll(children: readonly ChildProcess[], cluster?: Emulator): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  await cluster?.stop();
  await cleanupLoop();
  for (const server of ownServers) server.kill('SIGTERM');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  console.log('rolepolicy demo\n\nlocal servers:');
  if (!(await checkDependencies())) {
    for (const server of ownServers) server.kill('SIGTERM');
    process.exit(1);
  }

  // The embedded cluster: the same emulator the tests use, serving the project's CRDs with admission.
  const cluster: Emulator = await startEmulator({ crdDir: crdDirectory() });
  console.log(`\nembedded Kubernetes API: ${cluster.url} (kubeconfig ${cluster.kubeconfigPath})`);

  const bases = new Map<Service, string>();
  const children: ChildProcess[] = [];
  let stopping = false;
  SERVICES.forEach((service, i) => {
    const port = options.portBase + i;
    bases.set(service, `http://${options.host}:${port}`);
    const child = startService(service, port, options, cluster.kubeconfigPath);
    child.once('exit', (code, signal) => {
      if (stopping) return;
      console.error(`\n${service} stopped unexpectedly (${signal ?? `exit ${code}`}); stopping the demo`);
      stopping = true;
      void stopAll(children, cluster).then(() => process.exit(1));
    });
    children.push(child);
  });

  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping services...');
    void stopAll(children, cluster).then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  console.log(
    `\nstarting ${SERVICES.length} services (waiting up to ${options.healthDeadlineMs / 1000} s for /readyz)...`,
  );
  const deadline = Date.now() + options.healthDeadlineMs;
  const results = new Map<Service, Health | undefined>();
  while (!stopping) {
    for (const service of SERVICES) {
      if (results.get(service)?.readyz === 200) continue;
      results.set(service, await health(bases.get(service) ?? ''));
    }
    if (SERVICES.every((s) => results.get(s)?.readyz === 200) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (stopping) return;

  console.log('\nservice            healthz  readyz  dependencies              metrics');
  for (const service of SERVICES) {
    const h = results.get(service);
    const state = h
      ? `${String(h.healthz).padEnd(8)} ${String(h.readyz).padEnd(7)} ${h.checks.padEnd(25)}`
      : 'no answer'.padEnd(42);
    console.log(`${service.padEnd(18)} ${state} ${bases.get(service)}/metrics`);
  }
  const healthy = SERVICES.filter((s) => results.get(s)?.readyz === 200).length;
  console.log(`\n${healthy}/${SERVICES.length} services healthy`);

  if (healthy < SERVICES.length) {
    stopping = true;
    await stopAll(children, cluster);
    process.exit(1);
  }
  if (options.exitWhenHealthy) {
    stopping = true;
    await stopAll(children, cluster);
    console.log('all services healthy; stopped them (--exit-when-healthy)');
    process.exit(0);
  }
  try {
    await runDemoLoop(
      cluster.kubeConfig('demo'),
      options.stepTimeoutMs,
      (cleanup) => {
        cleanupLoop = cleanup;
      },
      `${bases.get('access-scheduler')}/queues`,
    );
  } catch (err) {
    stopping = true;
    console.error(`\ndemo loop did not complete: ${err instanceof Error ? err.message : String(err)}`);
    await stopAll(children, cluster);
    process.exit(1);
  }
  if (options.exitWhenDone) {
    stopping = true;
    await stopAll(children, cluster);
    console.log('stopped the services (--exit-when-done)');
    process.exit(0);
  }
  console.log(
    `\ntry: KUBECONFIG=${cluster.kubeconfigPath} kubectl get postgrespolicies,postgrespolicyplans -n demo`,
  );
  console.log('services keep running; press Ctrl-C to stop.');
}

await main();
