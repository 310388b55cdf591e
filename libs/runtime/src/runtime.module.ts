// Global module every service imports once: NATS connection, config, metrics, readiness and the
// health controller. Feature modules inject its tokens (NATS_CONNECTION, JetStreamPublisher, ...).
import {
  Global,
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { readFileSync } from 'node:fs';
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import {
  DEFAULT_PUBLISH_RETRY,
  JetStreamPublisher,
  SPINE_CONSUMERS,
  STREAMS,
  type ConsumerDefinition,
} from '@rolepolicy/contracts';
import { LoggerModule } from 'nestjs-pino';
import { AuditLog } from './audit-log.js';
import type { BaseConfig } from './base-config.js';
import { HealthController } from './health.controller.js';
import { registerJetStreamMetrics } from './jetstream-metrics.js';
import { loggerParams } from './logging.js';
import { createServiceMetrics, type ServiceMetrics } from './metrics.js';
import { natsCheck, type DependencyCheck } from './readiness.js';
import {
  AUDIT_LOG,
  DEPENDENCY_CHECKS,
  NATS_CONNECTION,
  SERVICE_CONFIG,
  SERVICE_METRICS,
  SERVICE_NAME,
} from './tokens.js';

/** Where retried publishes are reported (subject and error only). */
const publishLogger = new Logger('JetStreamPublisher');

/** What {@link RuntimeModule.forRoot} needs. */
export type RuntimeOptions = {
  readonly service: string;
  readonly config: BaseConfig;
  /** Dependencies beyond NATS that /readyz must see answering (e.g. Redis). */
  readonly checks?: readonly DependencyCheck[];
};

/**
 * Opens the NATS connection; it reconnects forever, so a NATS restart only makes /readyz red for a while.
 * The first connect must succeed: a service that never reached NATS has nothing to do.
 */
async function openNats(service: string, config: BaseConfig): Promise<NatsConnection> {
  try {
    return await connect(natsConnectOptions(service, config));
  } catch (err) {
    const code = err instanceof Error ? err.message : String(err);
    throw new Error(`cannot connect to NATS (NATS_URL): ${code}`, { cause: err });
  }
}

/**
 * Connect options from the configuration: credentials (files read here, at connect time), TLS when a CA
 * or client certificate is given, and a private inbox prefix `_INBOX_<service>`, so replies to this
 * service's requests (Secret values among them) arrive on subjects only its NATS user may subscribe to.
 */
export function natsConnectOptions(service: string, config: BaseConfig): NodeConnectionOptions {
  const tls =
    config.NATS_TLS_CA_FILE !== undefined || config.NATS_TLS_CERT_FILE !== undefined
      ? {
          ...(config.NATS_TLS_CA_FILE ? { caFile: config.NATS_TLS_CA_FILE } : {}),
          ...(config.NATS_TLS_CERT_FILE ? { certFile: config.NATS_TLS_CERT_FILE } : {}),
          ...(config.NATS_TLS_KEY_FILE ? { keyFile: config.NATS_TLS_KEY_FILE } : {}),
        }
      : undefined;
  const auth = config.NATS_CREDS_FILE
    ? { authenticator: credsAuthenticator(new Uint8Array(readFileSync(config.NATS_CREDS_FILE))) }
    : config.NATS_NKEY_SEED_FILE
      ? {
          authenticator: nkeyAuthenticator(
            new TextEncoder().encode(readFileSync(config.NATS_NKEY_SEED_FILE, 'utf8').trim()),
          ),
        }
      : config.NATS_USER !== undefined
        ? { user: config.NATS_USER, pass: config.NATS_PASSWORD ?? '' }
        : {};
  return {
    servers: [...config.NATS_URL],
    name: `rolepolicy-${service}`,
    inboxPrefix: `_INBOX_${service}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // nats.js otherwise builds two Error objects (with stack traces) for every request, JetStream publish
    // and ackAck, in case it times out: about 5% of the gateway's CPU in the 500-database fleet profile.
    // Errors keep their messages; they only lose the caller's stack.
    noAsyncTraces: true,
    ...(tls ? { tls } : {}),
    ...auth,
  };
}

/** Provider that registers the JetStream gauges (nothing injects it). */
const JETSTREAM_METRICS = Symbol('rp.jetstream-metrics');

/** Closes what the runtime opened when Nest shuts down. */
class RuntimeLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
    @Inject(DEPENDENCY_CHECKS) private readonly checks: readonly DependencyCheck[],
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.checks.map((c) => c.close?.()));
    if (!this.nats.isClosed()) await this.nats.drain().catch(() => this.nats.close());
  }
}

/** Shared runtime of the five services. */
@Global()
@Module({})
export class RuntimeModule {
  /** Builds the runtime for one service. */
  static forRoot(options: RuntimeOptions): DynamicModule {
    return {
      module: RuntimeModule,
      imports: [LoggerModule.forRoot(loggerParams(options.service, options.config))],
      controllers: [HealthController],
      providers: [
        { provide: SERVICE_NAME, useValue: options.service },
        { provide: SERVICE_CONFIG, useValue: options.config },
        { provide: SERVICE_METRICS, useValue: createServiceMetrics(options.service) },
        { provide: AUDIT_LOG, useValue: new AuditLog(options.service, options.config) },
        { provide: NATS_CONNECTION, useFactory: () => openNats(options.service, options.config) },
        {
          provide: DEPENDENCY_CHECKS,
          inject: [NATS_CONNECTION],
          useFactory: (nats: NatsConnection) => [natsCheck(nats), ...(options.checks ?? [])],
        },
        {
          provide: JetStreamPublisher,
          inject: [NATS_CONNECTION],
          // A write the broker did not confirm is sent again with backoff (same message id: deduplicated).
          useFactory: (nats: NatsConnection) =>
            new JetStreamPublisher(nats, {
              retry: DEFAULT_PUBLISH_RETRY,
              onRetry: (subject, attempt, error) =>
                publishLogger.warn(`publishing on ${subject} failed (${error.message}); retry ${attempt}`),
            }),
        },
        {
          // JetStream figures of the service's own durable consumers and the dead letters on /metrics.
          provide: JETSTREAM_METRICS,
          inject: [NATS_CONNECTION, SERVICE_METRICS],
          useFactory: (nats: NatsConnection, metrics: ServiceMetrics) =>
            registerJetStreamMetrics(metrics.registry, nats, {
              consumers:
                (SPINE_CONSUMERS as Readonly<Record<string, readonly ConsumerDefinition[]>>)[
                  options.service
                ] ?? [],
              deadLetterStream: STREAMS.deadLetter,
            }),
        },
        RuntimeLifecycle,
      ],
      exports: [
        AUDIT_LOG,
        SERVICE_NAME,
        SERVICE_CONFIG,
        SERVICE_METRICS,
        NATS_CONNECTION,
        DEPENDENCY_CHECKS,
        JetStreamPublisher,
      ],
    };
  }
}
