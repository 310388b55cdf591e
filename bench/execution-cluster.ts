// The execution bench's cluster side, in the bench process: a private nats-server with the spine's
// streams, the k8s-gateway's part played here (resource events for Secrets, policies and plans, sealed
// answers to Secret reads: @rolepolicy/testing's stand-in, the executor's cluster tests' too), and one
// executor started from dist/ as its own process, so its CPU is its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  STREAMS,
  ensureStores,
  ensureTopology,
  serviceTopology,
  type SecretResponder,
} from '@rolepolicy/contracts';
import {
  ApiSecrets,
  freePort,
  planObject,
  policyObject,
  publishAsGateway,
  secretObject,
  startPrivateNatsServer,
  type ApprovedDigest,
  type PrivateNatsServer,
} from '@rolepolicy/testing';

import { processCpuSeconds } from './cpu-time.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Read and write system calls of a process so far (`/proc/<pid>/io`). */
export interface Syscalls {
  readonly reads: number;
  readonly writes: number;
}

/** {@link Syscalls} of `pid` (zeros once it is gone). */
export function syscalls(pid: number | 'self'): Syscalls {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(io)?.[1] ?? 0);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

/** What the plan records of the planner's approval. */
export type Approval = ApprovedDigest;

/** The bench's cluster: NATS, the gateway's Secret responder, and one executor process. */
export class ExecutionCluster {
  private readonly secrets = new ApiSecrets();
  private responder: SecretResponder | undefined;
  private executor: ChildProcess | undefined;

  private constructor(
    private readonly server: PrivateNatsServer,
    readonly nc: NatsConnection,
  ) {}

  /** Starts NATS with the whole spine topology (as the gateway creates it) and the Secret responder. */
  static async start(): Promise<ExecutionCluster> {
    const server = await startPrivateNatsServer();
    const nc = await connect({ servers: server.url });
    const cluster = new ExecutionCluster(server, nc);
    await ensureTopology(await jetstreamManager(nc), serviceTopology('k8s-gateway'));
    await ensureStores(nc);
    cluster.responder = cluster.secrets.serve(nc, {
      queue: 'bench-gateway',
      warn: (line) => console.warn(line),
    });
    return cluster;
  }

  /** Starts the executor from dist/ (BENCH_CPU_PROF=<dir>: it writes a CPU profile there when it stops). */
  async startExecutor(concurrency: number): Promise<void> {
    const port = await freePort();
    this.executor = spawn(
      process.execPath,
      [
        ...(process.env['BENCH_CPU_PROF']
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`]
          : []),
        '--import',
        `${ROOT}/tools/register-aliases.mjs`,
        `${ROOT}/dist/apps/executor/src/main.js`,
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          ...process.env,
          NATS_URL: this.server.url,
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(port),
          LOG_LEVEL: 'error',
          EXECUTOR_CONCURRENCY: String(concurrency),
        },
      },
    );
    const deadline = Date.now() + 60_000;
    const jsm = await jetstreamManager(this.nc);
    for (;;) {
      // BENCH_NO_HTTP=1: ready once the executor pulls (no HTTP request reaches it, as with no probes).
      const status = process.env['BENCH_NO_HTTP']
        ? await jsm.consumers
            .info(STREAMS.execute, 'executor-execute')
            .then((info) => (info.num_waiting > 0 ? 200 : 0))
            .catch(() => 0)
        : await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })
            .then(async (res) => (await res.arrayBuffer(), res.status))
            .catch(() => 0);
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error('the executor did not become ready within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Read and write system calls of the executor process so far (socket round trips show as writes). */
  executorSyscalls(): Syscalls {
    return syscalls(this.executor?.pid ?? 'self');
  }

  /** CPU seconds of the executor process so far. */
  executorCpuSeconds(): number {
    return processCpuSeconds(this.executor?.pid);
  }

  /** The connection Secret: its value answers reads, its metadata goes on the resource stream. */
  async publishSecret(namespace: string, name: string, url: string): Promise<void> {
    await this.publish('secret', secretObject(namespace, name, { DATABASE_URL: url }));
  }

  /** The policy as the gateway publishes it. */
  async publishPolicy(namespace: string, name: string, uid: string, spec: object): Promise<void> {
    await this.publish('postgrespolicy', policyObject(namespace, name, uid, spec));
  }

  /** The policy's plan, approved as the fleet's are (AutoApproved), recording the planner's digest and identity. */
  async publishPlan(namespace: string, name: string, policy: string, approval: Approval): Promise<void> {
    await this.publish(
      'postgrespolicyplan',
      planObject(namespace, name, policy, approval, 'Approved', 'Approved', {
        reason: 'AutoApproved',
        username: 'bench',
      }),
    );
  }

  private async publish(
    kind: Parameters<typeof publishAsGateway>[1],
    object: Parameters<typeof publishAsGateway>[2],
  ): Promise<void> {
    await publishAsGateway(this.nc, kind, object, { secrets: this.secrets });
  }

  /** Stops the executor (SIGTERM, so a CPU profile is written), the responder and NATS. */
  async stop(): Promise<void> {
    const child = this.executor;
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await this.responder?.stop();
    await this.nc.close();
    await this.server.dispose();
  }
}
