// Nest wiring of the gateway feature: builds one Gateway from the service configuration and the
// runtime's NATS connection and publisher, joins the election at bootstrap and leaves it at shutdown.
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  DEFAULT_BACKOFF,
  JetStreamPublisher,
  SPINE_CONSUMERS,
  SUBJECTS,
  deadLetterSubject,
  k8sCommandContract,
  resourceEventContract,
  resourceSubject,
} from '@rolepolicy/contracts';
import { Counter, Gauge } from 'prom-client';
import { NATS_CONNECTION, SERVICE_CONFIG, SERVICE_METRICS, type ServiceMetrics } from '@rolepolicy/runtime';
import type { GatewayConfig } from './gateway-config.js';
import { Gateway, kubeConfigFrom, type GatewayWiring } from './gateway.js';

/** Injection token of the optional overrides given to {@link GatewayModule.forRoot}. */
export const GATEWAY_OVERRIDES = Symbol('rp.gateway-overrides');

/** Overrides for tests: a sandbox's subjects and consumer, or a configuration not read from the env. */
export type GatewayOverrides = Partial<GatewayWiring> & { readonly config?: GatewayConfig };

/** The production messaging wiring. */
export function defaultWiring(): GatewayWiring {
  const consumer = SPINE_CONSUMERS['k8s-gateway'][0];
  if (!consumer) throw new Error('the spine declares no k8s-gateway consumer');
  return {
    resourceContract: resourceEventContract,
    resourceSubject,
    commandContract: k8sCommandContract,
    commandConsumer: consumer,
    deadLetterSubject: (subject) => deadLetterSubject(subject),
    backoff: DEFAULT_BACKOFF,
    secretReadSubject: SUBJECTS.secretRead,
    secretGenerateSubject: SUBJECTS.secretGenerate,
  };
}

/** Owns the replica's Gateway for the application's lifetime. */
@Injectable()
export class GatewayService implements OnApplicationBootstrap, OnApplicationShutdown {
  /** The replica (exposed for health and tests). */
  readonly gateway: Gateway;

  constructor(
    @Inject(NATS_CONNECTION) nats: NatsConnection,
    publisher: JetStreamPublisher,
    @Inject(SERVICE_CONFIG) serviceConfig: GatewayConfig,
    @Inject(GATEWAY_OVERRIDES) overrides: GatewayOverrides,
    @Inject(SERVICE_METRICS) metrics: ServiceMetrics,
  ) {
    const config = overrides.config ?? serviceConfig;
    const { config: _config, ...wiring } = overrides;
    // Commands a sender may not send (ADR 0022): any increase means a misbehaving or compromised service.
    const refused = new Counter({
      name: 'rp_k8s_gateway_commands_refused_total',
      help: 'Commands the k8s-gateway refused because their sender may not send them (ADR 0022)',
      labelNames: ['sender', 'command', 'kind'],
      registers: [metrics.registry],
    });
    this.gateway = new Gateway(
      kubeConfigFrom(config),
      nats,
      publisher,
      config,
      { ...defaultWiring(), ...wiring },
      new Logger('k8s-gateway'),
      metrics.observe,
      (sender, command) => refused.inc({ sender, command: command.command, kind: command.target.kind }),
    );
    const gateway = this.gateway;
    // Dashboards show which replica leads; exactly one series per cluster should read 1.
    new Gauge({
      name: 'rp_k8s_gateway_leader',
      help: '1 while this k8s-gateway replica holds the leader Lease, else 0',
      registers: [metrics.registry],
      collect() {
        this.set(gateway.isLeader() ? 1 : 0);
      },
    });
  }

  onApplicationBootstrap(): void {
    this.gateway.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.gateway.stop();
  }
}

/** The gateway feature module. */
@Module({})
export class GatewayModule {
  /** Registers the gateway; `overrides` is for tests. */
  static forRoot(overrides: GatewayOverrides = {}): DynamicModule {
    return {
      module: GatewayModule,
      providers: [{ provide: GATEWAY_OVERRIDES, useValue: overrides }, GatewayService],
      exports: [GatewayService],
    };
  }
}
