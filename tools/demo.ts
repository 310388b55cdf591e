// `npm run demo`: checks the local PostgreSQL, NATS and Redis, starts the embedded Kubernetes API emulator
// with the project's CRDs, boots the five services as child processes against it, prints each one's health
// and metrics URL, then runs the reconcile loop (tools/demo-loop.ts) and keeps everything running until
// Ctrl-C (`--exit-when-healthy` stops before the loop, `--exit-when-done` after it).
import type { ChildProcess } from 'node:child_process';
import { startEmulator, type Emulator } from '@rolepolicy/testing';
import {
  checkDependencies,
  crdDirectory,
  health,
  ownServers,
  queueDashboard,
  SERVICES,
  startService,
  type Health,
  type Service,
} from './local-stack.js';
import { runDemoLoop, type DemoCleanup } from './demo-loop.js';

type Options = {
  readonly exitWhenHealthy: boolean;
  readonly exitWhenDone: boolean;
  /** Bound of each loop step (convergence, a plan appearing, an approval applying). */
  readonly stepTimeoutMs: number;
  /** Duration of the demo's ephemeral grant (20 s by default: long enough to watch, short enough to wait for). */
  readonly ephemeralSeconds: number;
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
  const ephemeralSeconds = Number(env['DEMO_EPHEMERAL_SECONDS'] ?? '20');
  if (!Number.isInteger(ephemeralSeconds) || ephemeralSeconds < 1 || ephemeralSeconds > 3600) {
    console.error('DEMO_EPHEMERAL_SECONDS must be an integer between 1 and 3600 (seconds)');
    process.exit(2);
  }
  return {
    healthDeadlineMs,
    stepTimeoutMs,
    ephemeralSeconds,
    exitWhenDone: argv.includes('--exit-when-done') || env['DEMO_EXIT_WHEN_DONE'] === '1',
    exitWhenHealthy: argv.includes('--exit-when-healthy') || env['DEMO_EXIT_WHEN_HEALTHY'] === '1',
    portBase,
    host: '127.0.0.1',
  };
}

/** How long a service may take to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 15_000;

/** Drops the demo database and roles; runs after the services stopped (they hold connections to it). */
let cleanupLoop: DemoCleanup = async () => undefined;

async function stopAll(children: readonly ChildProcess[], cluster?: Emulator): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          // A service whose shutdown hangs (seen on a loaded machine) must not keep the demo from exiting.
          const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
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
    const child = startService(service, port, options.host, cluster.kubeconfigPath);
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
      (cleanup) => {
        cleanupLoop = cleanup;
      },
      {
        stepTimeoutMs: options.stepTimeoutMs,
        ephemeralSeconds: options.ephemeralSeconds,
        dashboard: queueDashboard(bases.get('access-scheduler') ?? ''),
      },
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
    `\ntry: KUBECONFIG=${cluster.kubeconfigPath} kubectl get postgrespolicies,postgrespolicyplans,ephemeralaccessrequests -n demo`,
  );
  console.log('services keep running; press Ctrl-C to stop.');
}

await main();
