// Nest module of execution work: the handler on the work subject, the service, and where secrets and fresh
// cluster state come from (the gateway's resource events in production, a fixed resolver in tests).
import { Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamPublisher, SUBJECTS } from '@rolepolicy/contracts';
import { NATS_CONNECTION, SERVICE_METRICS, type ServiceMetrics } from '@rolepolicy/runtime';
import { EXECUTION_DISPATCH, createExecutionDispatch } from './dispatch.js';
import { executeController } from './execute.controller.js';
import {
  EXECUTION_CLUSTER,
  ExecutionClusterShutdown,
  startExecutionCluster,
  type ExecutionCluster,
} from './execution-cluster.js';
import { ExecutionService } from './execution.service.js';
import { EXECUTION_OPTIONS, type ExecutionOptions } from './options.js';

/** Execution feature module. */
@Module({})
export class ExecutionModule {
  /** Serves execution requests on `options.requestSubject` (default `rp.execute.request`). */
  static register(options: ExecutionOptions): DynamicModule {
    if (options.cluster === undefined && options.secrets === undefined) {
      throw new Error('ExecutionModule needs `cluster` (production) or `secrets` (tests)');
    }
    const cluster = options.cluster;
    return {
      module: ExecutionModule,
      controllers: [executeController(options.requestSubject ?? SUBJECTS.executeRequest)],
      providers: [
        { provide: EXECUTION_OPTIONS, useValue: options },
        cluster === undefined
          ? { provide: EXECUTION_CLUSTER, useValue: null }
          : {
              provide: EXECUTION_CLUSTER,
              inject: [NATS_CONNECTION, JetStreamPublisher],
              useFactory: (nc: NatsConnection, publisher: JetStreamPublisher): Promise<ExecutionCluster> =>
                startExecutionCluster(nc, publisher, cluster),
            },
        ExecutionClusterShutdown,
        ExecutionService,
        {
          provide: EXECUTION_DISPATCH,
          inject: [{ token: SERVICE_METRICS, optional: true }],
          useFactory: (metrics?: ServiceMetrics) => createExecutionDispatch(metrics),
        },
      ],
    };
  }
}
