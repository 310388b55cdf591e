// The product the ephemeral benchmark measures, in one of two layouts. By default each service is a Node
// process of its own (service-processes.ts), as a deployment runs one pod per service; the bench process keeps
// the API emulator and its own polling. `--in-process` runs every service in the bench's process instead (the
// e2e stack, the layout until 2026-11-28): there one event loop carried the emulator and all five services,
// 97% busy while requests expired, so the bench measured its own process more than the product.
import type { KubeConfig } from '@kubernetes/client-node';
import type { PostgresPolicy } from '@rolepolicy/kube';
import { sandboxId } from '@rolepolicy/testing';

import { startStack, type TargetDatabase } from '../e2e/stack.js';
import { PolicyResources, reconciledPolicy } from '../e2e/support/resources.js';
import { TargetDatabases } from '../e2e/support/targets.js';
import { benchCpuSeconds } from './cpu-time.js';
import { ApiWriteCounter } from './fleet-health.js';
import { startProductProcesses, type AccessSchedulerSettings } from './service-processes.js';

/** Where the services run. */
export type EphemeralLayout = 'processes' | 'in-process';

/** What the ephemeral benchmark needs from the running product, whichever the layout. */
export type EphemeralProduct = {
  readonly layout: EphemeralLayout;
  readonly kubeConfig: KubeConfig;
  /** Policies as a cluster user creates them. */
  readonly resources: PolicyResources;
  /** A sandbox database plus its connection Secret `<label>-db`. */
  createDatabase(label: string): Promise<TargetDatabase>;
  /** A role name of this run (its prefix is dropped with the databases at the end). */
  role(base: string): string;
  /** Waits until the policy is `Ready=True/Reconciled` at its generation. */
  reconciled(name: string, timeoutMs: number): Promise<PostgresPolicy>;
  /** `http://127.0.0.1:<port>` of the (first) instance of a service: its /metrics. */
  url(service: 'access-scheduler' | 'executor'): string;
  /**
   * CPU seconds so far of each service process and of the bench process (`bench`: the API emulator and the
   * bench's polling, and in-process every service as well). Sample before {@link stopServices}.
   */
  cpuSeconds(): Record<string, number>;
  /** Peak RSS (MiB) so far of each service process and of the bench process, keyed as {@link cpuSeconds}. */
  peakRssMiB(): Record<string, number>;
  /** API writes so far by `<VERB> <resource>[/<sub>]` (the emulator's count, refused ones apart: fleet-health.ts). */
  apiWrites(): ReadonlyMap<string, number>;
  /** Stops the services, keeping the databases (the floor runs on them without a planner undoing it). */
  stopServices(): Promise<void>;
  /** Stops everything, drops the databases and the run's roles. */
  stop(): Promise<void>;
};

const benchFigures = () => ({
  cpu: { bench: benchCpuSeconds().own },
  // maxRSS is in KiB.
  rss: { bench: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10 },
});

/** Starts the product in `layout`, its access-scheduler on `scheduler`'s Redis, and waits until it is ready. */
export async function startEphemeralProduct(
  layout: EphemeralLayout,
  namespace: string,
  scheduler: AccessSchedulerSettings,
): Promise<EphemeralProduct> {
  return layout === 'processes'
    ? startAsProcesses(namespace, scheduler)
    : startInProcess(namespace, scheduler);
}

async function startAsProcesses(
  namespace: string,
  scheduler: AccessSchedulerSettings,
): Promise<EphemeralProduct> {
  // One executor, as the in-process stack; every service with its defaults otherwise, as deploy/base has them.
  const product = await startProductProcesses({ executors: 1, namespace, accessScheduler: scheduler });
  const writes = new ApiWriteCounter();
  product.emulator.setRequestHook(writes.hook);
  const kubeConfig = product.emulator.kubeConfig(namespace);
  const targets = new TargetDatabases(kubeConfig, namespace, `rp_eph_${sandboxId()}_`);
  const resources = new PolicyResources(kubeConfig, namespace);
  const url = (service: string): string => product.services.find((s) => s.name === service)!.url;
  return {
    layout: 'processes',
    kubeConfig,
    resources,
    createDatabase: (label) => targets.create(label),
    role: (base) => `${targets.rolePrefix}${base}`,
    reconciled: (name, timeoutMs) => reconciledPolicy(resources, name, timeoutMs),
    url,
    cpuSeconds: () => ({ ...product.cpuSeconds(), ...benchFigures().cpu }),
    peakRssMiB: () => ({ ...product.peakRssMiB(), ...benchFigures().rss }),
    apiWrites: () => writes.snapshot(),
    stopServices: () => product.stopServices(),
    stop: async () => {
      await product.stopServices();
      await targets.dispose();
      await product.stop();
    },
  };
}

async function startInProcess(
  namespace: string,
  scheduler: AccessSchedulerSettings,
): Promise<EphemeralProduct> {
  const stack = await startStack({
    namespace,
    env: { REDIS_URL: scheduler.redisUrl, ACCESS_SCHEDULER_REDIS_PREFIX: scheduler.redisPrefix },
  });
  try {
    await stack.waitReady(60_000);
  } catch (error) {
    await stack.stop();
    throw error;
  }
  const writes = new ApiWriteCounter();
  stack.emulator.setRequestHook(writes.hook);
  return {
    layout: 'in-process',
    kubeConfig: stack.kubeConfig,
    resources: stack.resources,
    createDatabase: (label) => stack.createDatabase(label),
    role: (base) => stack.role(base),
    reconciled: (name, timeoutMs) => stack.reconciled(name, timeoutMs),
    url: (service) => stack.services.find((s) => s.name === service)!.url,
    cpuSeconds: () => benchFigures().cpu,
    peakRssMiB: () => benchFigures().rss,
    apiWrites: () => writes.snapshot(),
    stopServices: () => stack.stopServices(),
    stop: () => stack.stop(),
  };
}
