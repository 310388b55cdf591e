// Boots one service: validated config, Nest HTTP app (health, metrics) plus the JetStream transport.
// apps/<name>/src/main.ts only calls runService(); tests call startService() with sandbox overrides.
import 'reflect-metadata';
import {
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type INestApplication,
  type LogLevel,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamServer,
  RpcErrorPassthroughFilter,
  SPINE_CONTRACTS,
  deadLetterSubject,
  serviceTopology,
  TOPOLOGY_OWNER,
  type BackoffPolicy,
  type MessageContract,
  type ServiceName,
  type SlotCounts,
  type Topology,
} from '@rolepolicy/contracts';
import { natsConfigProblems, type BaseConfig } from './base-config.js';
import { ConfigError, loadConfig, type ConfigOf, type EnvSpec } from './config.js';
import type { ServiceMetrics } from './metrics.js';
import type { DependencyCheck } from './readiness.js';
import { RuntimeModule } from './runtime.module.js';
import { NATS_CONNECTION, SERVICE_METRICS } from './tokens.js';
import { startTelemetry, type TelemetryHandle } from './telemetry/telemetry.js';

/** How one service is put together; each app exports one of these. */
export type ServiceDefinition<S extends EnvSpec> = {
  readonly service: ServiceName;
  /** Must include {@link baseEnvSpec}; validated before anything starts. */
  readonly envSpec: S;
  /** The app's own module, where feature modules are imported. */
  readonly module: Type<unknown>;
  /** Dependencies besides NATS that readiness must see (e.g. Redis). */
  readonly checks?: (config: ConfigOf<S>) => readonly DependencyCheck[];
  /**
   * Messages each of the service's consumers handles at once (default 1), from the configuration: one
   * number, or a default plus counts for named durables.
   */
  readonly concurrency?: (config: ConfigOf<S>) => SlotCounts;
};

/** Overrides for tests and tools; production uses the defaults. */
export type StartOptions = {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly topology?: Topology;
  readonly contracts?: readonly MessageContract[];
  readonly deadLetterSubject?: (subject: string) => string;
  readonly backoff?: BackoffPolicy;
  /** Extra modules (test handlers) imported next to the app module. */
  readonly imports?: readonly (Type<unknown> | DynamicModule)[];
};

const LEVELS: readonly LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];

@Module({})
class ServiceRootModule {}

/** Flushes and releases the service's telemetry after everything else has shut down. */
class TelemetryShutdown implements OnApplicationShutdown {
  constructor(private readonly telemetry: TelemetryHandle | undefined) {}

  async onApplicationShutdown(): Promise<void> {
    await this.telemetry?.release();
  }
}

/**
 * Starts a service and resolves once it listens on HTTP and pulls from JetStream.
 * @throws ConfigError when a variable is missing or malformed
 */
export async function startService<S extends EnvSpec>(
  def: ServiceDefinition<S>,
  options: StartOptions = {},
): Promise<INestApplication> {
  const config = loadConfig(def.envSpec, options.env ?? process.env);
  // Cast: every service's env spec extends the base spec, which TypeScript cannot see through the generic.
  const base = config as unknown as BaseConfig;
  const natsProblems = natsConfigProblems(base);
  if (natsProblems.length > 0) throw new ConfigError(natsProblems);
  // Before Nest, so the first message a service handles is already traced (off without OTEL_*: docs/tracing.md).
  const telemetry = await startTelemetry(def.service);
  try {
    return await startNest(def, options, config, base, telemetry);
  } catch (err) {
    await telemetry?.release();
    throw err;
  }
}

async function startNest<S extends EnvSpec>(
  def: ServiceDefinition<S>,
  options: StartOptions,
  config: ConfigOf<S>,
  base: BaseConfig,
  telemetry: TelemetryHandle | undefined,
): Promise<INestApplication> {
  const root: DynamicModule = {
    module: ServiceRootModule,
    providers: [{ provide: TelemetryShutdown, useValue: new TelemetryShutdown(telemetry) }],
    imports: [
      RuntimeModule.forRoot({ service: def.service, config: base, checks: def.checks?.(config) ?? [] }),
      def.module,
      ...(options.imports ?? []),
    ],
  };
  // Nest's own lines wait for the pino logger (structured, redacted; libs/runtime/src/logging.ts).
  const app = await NestFactory.create(root, {
    logger: LEVELS.slice(0, LEVELS.indexOf(base.LOG_LEVEL) + 1),
    bufferLogs: true,
  });
  try {
    app.useLogger(app.get(PinoNestLogger));
    const metrics = app.get<ServiceMetrics>(SERVICE_METRICS);
    const strategy = new JetStreamServer({
      connection: app.get<NatsConnection>(NATS_CONNECTION),
      topology: options.topology ?? serviceTopology(def.service),
      // Only the topology owner creates streams and consumers; the others bind (ADR 0022). A test's own
      // topology (a sandbox) is ensured by whoever starts with it.
      topologyAccess: options.topology === undefined && def.service !== TOPOLOGY_OWNER ? 'bind' : 'ensure',
      // The owner also creates the lease bucket and the snapshot object store the planner and inspector bind to.
      ensureStores: options.topology === undefined && def.service === TOPOLOGY_OWNER,
      contracts: options.contracts ?? SPINE_CONTRACTS,
      deadLetterSubject: options.deadLetterSubject ?? ((subject) => deadLetterSubject(subject)),
      observe: metrics.observe,
      service: def.service,
      ...(def.concurrency ? { concurrency: def.concurrency(config) } : {}),
      ...(options.backoff ? { backoff: options.backoff } : {}),
    });
    // Deferred so the filter is in place before Nest wraps the handlers. A deferred hybrid microservice
    // would run every module's init and bootstrap hooks a second time on the shared container (services
    // would start their informers, leases and timers twice), so the application runs them, once, here.
    const microservice = app.connectMicroservice({ strategy }, { deferInitialization: true });
    microservice.useGlobalFilters(new RpcErrorPassthroughFilter());
    markHooksCalled(microservice);
    app.enableShutdownHooks();
    await app.init();
    await app.startAllMicroservices();
    await app.listen(base.HTTP_PORT, base.HTTP_HOST);
    return app;
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
}

/** Tells a hybrid microservice that the application already ran the lifecycle hooks. */
function markHooksCalled(microservice: unknown): void {
  const target = microservice as { setIsInitHookCalled?: (called: boolean) => void };
  if (typeof target.setIsInitHookCalled !== 'function') {
    throw new Error('@nestjs/microservices no longer exposes setIsInitHookCalled; review bootstrap.ts');
  }
  target.setIsInitHookCalled(true);
}

/**
 * Entry point of a service process: starts it, or prints why not and exits with status 1.
 * A configuration error names every offending variable.
 */
export async function runService<S extends EnvSpec>(def: ServiceDefinition<S>): Promise<void> {
  try {
    const app = await startService(def);
    const url = await app.getUrl();
    app.get(PinoNestLogger).log(`service up: ${url}/healthz ${url}/readyz ${url}/metrics`, 'Bootstrap');
  } catch (err) {
    const message =
      err instanceof ConfigError
        ? err.message
        : `failed to start: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`[${def.service}] ${message}`);
    process.exit(1);
  }
}
