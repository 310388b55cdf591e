// The services of one integration test file, booted in this process on free ports against the file's own
// nats-server and API emulator. Their log lines stay out of the test output (RP_TEST_VERBOSE shows them)
// and are kept in `logged`, so a test can prove what the services never print (a Secret value, a password).
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import type { INestApplication } from '@nestjs/common';
import { startService, type EnvSpec, type ServiceDefinition } from '@rolepolicy/runtime';
import { startEmulator, type Emulator } from '../emulator/start.js';
import { inspectSealEnv } from '../sandbox/inspect-seal.js';
import { freePort, startPrivateNatsServer, type PrivateNatsServer } from '../sandbox/nats-server.js';

/** deploy/crds of the source tree (tests run from source). */
const crdDir = (): string => fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));

/** A service's log line: Nest's text logger, or a JSON line of a rolepolicy service (pino). */
function isServiceLine(text: string): boolean {
  return text.includes('[Nest]') || text.includes('"service":"rolepolicy-');
}

/** Options of {@link InProcessServices}. */
export type InProcessServicesOptions = {
  /**
   * LOG_LEVEL of every service (default `log`). Nest's log levels are process-global (the last service
   * started wins), so one level serves them all.
   */
  readonly logLevel?: string;
};

/**
 * Starts services in this process and stops them in reverse order; captures their logs from construction
 * until {@link stop}.
 * @example
 * const services = new InProcessServices(nats.url);
 * const plannerUrl = await services.start(plannerService);
 * afterAll(() => services.stop());
 */
export class InProcessServices {
  /** Every log chunk the services wrote so far. */
  readonly logged: string[] = [];
  private readonly apps: INestApplication[] = [];
  private readonly writes = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
  };

  constructor(
    private readonly natsUrl: string,
    private readonly options: InProcessServicesOptions = {},
  ) {
    const capture =
      (forward: (chunk: string | Uint8Array) => boolean) =>
      (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        // Cast: write's overloads (encoding, callback) pass through unchanged.
        const pass = () => (forward as (...a: unknown[]) => boolean)(chunk, ...rest);
        if (!isServiceLine(text)) return pass();
        this.logged.push(text);
        return process.env['RP_TEST_VERBOSE'] ? pass() : true;
      };
    process.stdout.write = capture(this.writes.out) as typeof process.stdout.write;
    process.stderr.write = capture(this.writes.err) as typeof process.stderr.write;
  }

  /** Starts `def` on a free port with `extra` environment; answers its base URL (`/metrics`, `/readyz`). */
  async start(def: unknown, extra: Readonly<Record<string, string>> = {}): Promise<string> {
    const port = await freePort();
    const env = {
      NATS_URL: this.natsUrl,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      LOG_LEVEL: this.options.logLevel ?? 'log',
      ...inspectSealEnv(),
      ...extra,
    };
    // Cast: the caller's definition is any service's; startService only needs its env spec to be one.
    this.apps.push(await startService(def as ServiceDefinition<EnvSpec>, { env }));
    return `http://127.0.0.1:${port}`;
  }

  /** Closes the services, the last started first, and gives the output back. */
  async stop(): Promise<void> {
    for (const app of this.apps.splice(0).reverse()) await app.close().catch(() => undefined);
    process.stdout.write = this.writes.out;
    process.stderr.write = this.writes.err;
  }
}

/**
 * The k8s-gateway's environment in a test file: the emulator's kubeconfig, its Lease in `namespace`, every
 * namespace watched. Start it first: it creates the NATS topology the other services bind to (ADR 0022).
 */
function gatewayTestEnv(kubeconfigPath: string, namespace: string): Record<string, string> {
  return {
    KUBECONFIG: kubeconfigPath,
    LEASE_NAMESPACE: namespace,
    LEASE_RETRY_MS: '250',
    WATCH_NAMESPACE: '',
  };
}

/** A test file's cluster: its own nats-server, the API emulator serving deploy/crds, the k8s-gateway. */
export type ServiceCluster = {
  readonly nats: PrivateNatsServer;
  readonly emulator: Emulator;
  /** The emulator's admin kubeconfig with the test namespace as its default. */
  readonly kubeConfig: KubeConfig;
  /** The gateway, and whatever the test starts next ({@link InProcessServices.start}). */
  readonly services: InProcessServices;
  /** Stops the services (the last started first), then the nats-server and the emulator. */
  stop(): Promise<void>;
};

/**
 * Starts a private nats-server, the API emulator and `gateway` (the k8s-gateway's service definition, passed
 * in: a library imports no app) watching every namespace with its Lease in `namespace`. The gateway starts
 * first: it creates the NATS topology the other services bind to (ADR 0022).
 * @example
 * const cluster = await startServiceCluster('planner-int', k8sGatewayService);
 * const plannerUrl = await cluster.services.start(plannerService);
 * afterAll(() => cluster.stop());
 */
export async function startServiceCluster(
  namespace: string,
  gateway: unknown,
  options: InProcessServicesOptions = {},
): Promise<ServiceCluster> {
  const nats = await startPrivateNatsServer();
  const services = new InProcessServices(nats.url, options);
  const emulator = await startEmulator({ crdDir: crdDir() }).catch(async (error: unknown) => {
    await services.stop();
    await nats.dispose();
    throw error;
  });
  const stop = async () => {
    await services.stop();
    await nats.dispose();
    await emulator.stop();
  };
  await services.start(gateway, gatewayTestEnv(emulator.kubeconfigPath, namespace)).catch(async (error) => {
    await stop();
    throw error;
  });
  return { nats, emulator, kubeConfig: emulator.kubeConfig(namespace), services, stop };
}
