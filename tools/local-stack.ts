// What `npm run demo` and `npm run stack` share: the local PostgreSQL/NATS/Redis check (starting what
// is missing), the CRD directory, the five services as child processes, and their health probe.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { FALLBACK_POSTGRES_MAJOR, inspectSealEnv, postgresAdminUrl, TS_REGISTER } from '@rolepolicy/testing';
import { dashboardPath } from '../apps/access-scheduler/src/scheduler/dashboard.js';

/** The five services in start order, with their offset from the HTTP port base. */
export const SERVICES = ['k8s-gateway', 'inspector', 'planner', 'executor', 'access-scheduler'] as const;
export type Service = (typeof SERVICES)[number];

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
// Run from dist/tools/*.js the services are dist/apps/*/src/main.js; run from source, main.ts.
const extension = path.extname(fileURLToPath(import.meta.url));

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
export const ownServers: ChildProcess[] = [];

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
export async function checkDependencies(): Promise<boolean> {
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
export function crdDirectory(): string {
  const fromSource = path.resolve(here, '..', 'deploy', 'crds');
  return extension === '.ts' ? fromSource : path.resolve(here, '..', '..', 'deploy', 'crds');
}

/**
 * Writes `rolepolicy` and `kubectl-rolepolicy` launchers of this checkout into `<dir>/bin` and returns that
 * directory: with it on PATH, `kubectl rolepolicy ...` finds the plugin without `npm link`.
 * @example console.log(`export PATH=${await writeCliLaunchers(tmp)}:$PATH`)
 */
export async function writeCliLaunchers(dir: string): Promise<string> {
  const fromSource = extension === '.ts';
  const root = fromSource ? path.resolve(here, '..') : path.resolve(here, '..', '..');
  const bin = path.join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  const entries = {
    rolepolicy: fromSource ? 'apps/cli/src/cli-entry.ts' : 'bin/rolepolicy.mjs',
    'kubectl-rolepolicy': fromSource ? 'apps/cli/src/plugin-entry.ts' : 'bin/kubectl-rolepolicy.mjs',
  };
  // From source (the stack's own tests), through the TypeScript hooks as the tests' child processes.
  const hooks = fromSource ? ` --no-warnings --import ${JSON.stringify(TS_REGISTER)}` : '';
  for (const [name, entry] of Object.entries(entries)) {
    const script = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)}${hooks} ${JSON.stringify(path.join(root, entry))} "$@"\n`;
    await writeFile(path.join(bin, name), script, { mode: 0o755 });
  }
  return bin;
}

/**
 * Starts one service as a child process of this one (from source or from dist/, like this file),
 * listening on host:port and talking to the cluster in `kubeconfig`; its output is relayed with a
 * `[service] ` prefix. `defaultLogLevel` and `defaultLogFormat` apply when LOG_LEVEL / LOG_FORMAT are not set.
 */
export function startService(
  service: Service,
  port: number,
  host: string,
  kubeconfig: string,
  defaultLogLevel = 'warn',
  defaultLogFormat = 'json',
): ChildProcess {
  const entry = path.resolve(here, '..', 'apps', service, 'src', `main${extension}`);
  const child = spawn(process.execPath, [...process.execArgv, entry], {
    env: {
      ...process.env,
      HTTP_HOST: host,
      HTTP_PORT: String(port),
      KUBECONFIG: kubeconfig,
      // The inspectors' seal key pair of this local installation (a deployment gets it from generate.sh).
      ...inspectSealEnv(),
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? defaultLogLevel,
      LOG_FORMAT: process.env['LOG_FORMAT'] ?? defaultLogFormat,
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

export type Health = { readonly healthz: number; readonly readyz: number; readonly checks: string };

export async function health(base: string): Promise<Health | undefined> {
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

/**
 * The access-scheduler's Bull Board (its timer queues) at `base`, as the service mounts it from the same
 * environment, with `read-only` unless ACCESS_SCHEDULER_DASHBOARD_READ_ONLY=false.
 */
export function queueDashboard(base: string): { readonly url: string; readonly access: string } {
  const path = dashboardPath(process.env['ACCESS_SCHEDULER_DASHBOARD_PATH'] ?? '/queues');
  const readOnly = process.env['ACCESS_SCHEDULER_DASHBOARD_READ_ONLY'] !== 'false';
  return { url: `${base}${path}`, access: readOnly ? 'read-only' : 'read-write' };
}
