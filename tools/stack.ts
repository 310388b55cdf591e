// `npm run stack`: the product on this machine without the scripted demo. Checks the local PostgreSQL,
// NATS and Redis (starting what is missing, as the demo does), starts the embedded Kubernetes API
// emulator with the CRDs in this process (its state lives as long as the stack), boots the five
// services as child processes, prints the `export KUBECONFIG=…` line, each service's health and metrics
// URLs and the access-scheduler's Bull Board, and keeps running until Ctrl-C. A service that exits is
// started again (with backoff), so the stack survives crashes and `kill <pid>` of its own services.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { installDeployAccess, startEmulator, type Emulator } from '@rolepolicy/testing';
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
  writeCliLaunchers,
} from './local-stack.js';
import { startTraceSink } from './stack-traces.js';

type Options = {
  readonly host: string;
  readonly portBase: number;
  readonly apiPort: number;
  readonly healthDeadlineMs: number;
  /** Authentication, RBAC (deploy/base/rbac.yaml) and admission policies enforced by the API. */
  readonly accessControl: boolean;
  /** With accessControl: deploy/admission's policy of decisions, its parameter and ClusterRoles (ADR 0026). */
  readonly approvalAdmission: boolean;
};

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const value = Number(env[name] ?? String(fallback));
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`${name} must be an integer between ${min} and ${max}`);
    process.exit(2);
  }
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (value !== 'true' && value !== 'false') {
    console.error(`${name} must be true or false`);
    process.exit(2);
  }
  return value === 'true';
}

function parseOptions(env: NodeJS.ProcessEnv): Options {
  return {
    host: '127.0.0.1',
    portBase: integer(env, 'STACK_HTTP_PORT_BASE', 8081, 1, 65530),
    apiPort: integer(env, 'STACK_API_PORT', 0, 0, 65535),
    healthDeadlineMs: integer(env, 'STACK_HEALTH_TIMEOUT_MS', 60_000, 1, 3_600_000),
    accessControl: flag(env, 'STACK_API_ACCESS_CONTROL', true),
    approvalAdmission: flag(env, 'STACK_APPROVAL_ADMISSION', true),
  };
}

/** Set once Ctrl-C (SIGINT) or SIGTERM arrived: exits from then on are the shutdown, not crashes. */
let stopping = false;

/** Restart delay after the n-th quick exit in a row: 0.5 s doubling to 10 s. */
function backoffMs(failures: number): number {
  return Math.min(10_000, 500 * 2 ** Math.max(0, failures - 1));
}

/** Keeps one service running: starts it, and starts it again whenever it exits while the stack runs. */
class Supervised {
  child: ChildProcess | undefined;
  private failures = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly service: Service,
    readonly port: number,
    private readonly host: string,
    private readonly kubeconfig: string,
  ) {}

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  start(): void {
    this.startedAt = Date.now();
    const child = startService(this.service, this.port, this.host, this.kubeconfig, 'log', 'pretty');
    this.child = child;
    child.once('exit', (code, signal) => {
      // Ctrl-C in a terminal signals the services too: their exit is then no crash.
      if (stopping) return;
      // Up for a minute counts as healthy: the next crash restarts at once again.
      this.failures = Date.now() - this.startedAt > 60_000 ? 1 : this.failures + 1;
      const delay = backoffMs(this.failures);
      console.log(
        `[stack] ${this.service} (pid ${child.pid}) exited (${signal ?? `exit ${code}`}); restarting in ${delay} ms`,
      );
      this.timer = setTimeout(() => {
        this.start();
        console.log(`[stack] ${this.service} restarted (pid ${this.child?.pid})`);
      }, delay);
    });
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

async function waitHealthy(
  services: readonly Supervised[],
  deadlineMs: number,
): Promise<Map<Service, Health | undefined>> {
  const deadline = Date.now() + deadlineMs;
  const results = new Map<Service, Health | undefined>();
  for (;;) {
    for (const s of services) {
      if (results.get(s.service)?.readyz !== 200) results.set(s.service, await health(s.url));
    }
    if (services.every((s) => results.get(s.service)?.readyz === 200) || Date.now() > deadline)
      return results;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.env);
  console.log('rolepolicy stack\n\nlocal servers:');
  if (!(await checkDependencies())) {
    for (const server of ownServers) server.kill('SIGTERM');
    process.exit(1);
  }
  // STACK_TRACES=console or a file: tracing on, read without a collector (docs/tracing.md).
  const traces = await startTraceSink(process.env['STACK_TRACES']);
  if (traces) console.log(`\n${traces.describe}`);
  const cluster: Emulator = await startEmulator({
    port: options.apiPort,
    crdDir: crdDirectory(),
    ...(options.accessControl ? { authentication: {} } : {}),
  });
  // As installed from deploy/base: each service as its ServiceAccount, the gateway's RBAC and the admission
  // policies enforced; the Lease Role where the gateway keeps its Lease (LEASE_NAMESPACE, default `default`).
  const kubeconfigs = options.accessControl
    ? await installDeployAccess(cluster, SERVICES, {
        baseDir: path.resolve(crdDirectory(), '..', 'base'),
        leaseNamespace: process.env['LEASE_NAMESPACE'] ?? 'default',
        // deploy/base includes deploy/admission: approvals as a control (docs/approvals.md).
        ...(options.approvalAdmission
          ? {
              extraFiles: ['decisions.yaml', 'roles.yaml'].map((f) =>
                path.resolve(crdDirectory(), '..', 'admission', f),
              ),
            }
          : {}),
      })
    : undefined;
  console.log(
    `\nembedded Kubernetes API: ${cluster.url} (CRDs installed; state kept until the stack stops)` +
      (options.accessControl
        ? '\n  authentication, RBAC and admission policies enforced (deploy/base); services use their ServiceAccounts'
        : '\n  open: every request is the admin (STACK_API_ACCESS_CONTROL=false)'),
  );

  const services = SERVICES.map(
    (service, i) =>
      new Supervised(
        service,
        options.portBase + i,
        options.host,
        kubeconfigs?.[service] ?? cluster.kubeconfigPath,
      ),
  );
  const shutdown = (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\n[stack] stopping services...');
    void (async () => {
      for (const s of [...services].reverse()) await s.stop();
      await cluster.stop();
      await traces?.stop();
      for (const server of ownServers) server.kill('SIGTERM');
      console.log('[stack] stopped');
      process.exit(code);
    })();
  };
  process.on('SIGINT', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));

  console.log(
    `starting ${services.length} services (up to ${options.healthDeadlineMs / 1000} s for /readyz)...`,
  );
  for (const s of services) s.start();
  const results = await waitHealthy(services, options.healthDeadlineMs);
  if (stopping) return;

  console.log(
    '\nservice            pid      healthz  readyz  health                          metrics                         dashboard',
  );
  for (const s of services) {
    const h = results.get(s.service);
    const state = h ? `${String(h.healthz).padEnd(8)} ${String(h.readyz).padEnd(7)}` : 'no answer'.padEnd(16);
    // Only the access-scheduler serves one: Bull Board over its approval and expiry timer queues.
    const board = s.service === 'access-scheduler' ? queueDashboard(s.url) : undefined;
    console.log(
      `${s.service.padEnd(18)} ${String(s.child?.pid ?? '-').padEnd(8)} ${state} ${`${s.url}/healthz`.padEnd(31)} ${`${s.url}/metrics`.padEnd(31)} ${board ? `${board.url} (Bull Board, ${board.access})` : '-'}`,
    );
  }
  const healthy = services.filter((s) => results.get(s.service)?.readyz === 200).length;
  if (healthy < services.length) {
    console.error(`\n${healthy}/${services.length} services ready within the deadline; stopping`);
    shutdown(1);
    return;
  }
  console.log(`\n${healthy}/${services.length} services ready. In another terminal:\n`);
  console.log(`export KUBECONFIG=${cluster.kubeconfigPath}`);
  // `kubectl rolepolicy` (the plugin) and `rolepolicy` of this checkout, without `npm link`.
  console.log(`export PATH=${await writeCliLaunchers(path.dirname(cluster.kubeconfigPath))}:$PATH`);
  console.log('kubectl get crds');
  console.log('kubectl create namespace team-a');
  if (options.accessControl) {
    console.log('# you are kubernetes-admin (system:masters); act as someone else with --as:');
    console.log('kubectl auth whoami --as=alice');
    console.log('kubectl auth can-i patch postgrespolicyplans --subresource=status -n team-a --as=alice');
    console.log('kubectl rolepolicy whoami --as=alice');
    if (options.approvalAdmission) {
      console.log('# approvals are a control (docs/approvals.md): bind approvers, decide as yourself');
      console.log(
        'kubectl create rolebinding approvers -n team-a --clusterrole=rolepolicy-approver --group=dba',
      );
      console.log('kubectl auth whoami -o json --as=bob --as-group=dba   # the decidedBy bob must write');
    }
  }
  console.log('\n[stack] running; press Ctrl-C to stop.');
}

await main();
