// Nest module of execution work: the handler on the work subject, the service, and where secrets and fresh
// cluster state come from (the gateway's resource events in production, a fixed resolver in tests).
import { Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamPublisher, SUBJECTS } from '@rolepolicy/contracts';
import {
  databaseTlsFromConfig,
  workloadIdentityFromConfig,
  type ConnectionSpec,
  type DatabaseTls,
  type WorkloadIdentity,
} from '@rolepolicy/catalog';
import { NATS_CONNECTION, SERVICE_CONFIG, SERVICE_METRICS, type ServiceMetrics } from '@rolepolicy/runtime';
import {
  EXECUTION_DISPATCH,
  createExecutionDispatch,
  type ExecutionDispatch,
  type ServerWork,
} from './dispatch.js';
import { executeController } from './execute.controller.js';
import {
  EXECUTION_CLUSTER,
  ExecutionClusterShutdown,
  startExecutionCluster,
  type ExecutionCluster,
} from './execution-cluster.js';
import { ExecutionService } from './execution.service.js';
import { DATABASE_TLS, EXECUTION_OPTIONS, WORKLOAD_IDENTITY, type ExecutionOptions } from './options.js';
import { ROLE_LOCK_SESSIONS, RoleLockSessionsShutdown, roleLockSessions } from './role-lock.js';
import { scopedExecuteController } from '../scoped/scoped.controller.js';
import {
  DATABASE_SERIALIZER,
  ScopedExecutionService,
  type DatabaseSerializer,
} from '../scoped/scoped-execution.service.js';

/** The per-server bounds of the executor's configuration (config.ts). */
type ServerBounds = {
  readonly EXECUTOR_SERVER_CONCURRENCY?: number;
  readonly EXECUTOR_SERVER_REVOKE_CONCURRENCY?: number;
};

/** Runs `task` holding a slot of the server `server` points at, in the lane of `work` (dispatch.ts). */
async function holdingServerSlot<T>(
  dispatch: ExecutionDispatch,
  server: ConnectionSpec,
  work: ServerWork,
  task: () => Promise<T>,
): Promise<T> {
  const release = await dispatch.serverSlot(server, work);
  try {
    return await task();
  } finally {
    release();
  }
}

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
      controllers: [
        executeController(options.requestSubject ?? SUBJECTS.executeRequest),
        // Ephemeral access plans (ADR 0008): same cluster view and advisory lock, own durable.
        scopedExecuteController(options.scopedRequestSubject ?? SUBJECTS.scopedExecuteRequest),
        // Revocations and sweeps on their own subject and durable: never behind activations (ADR 0013, 0020).
        scopedExecuteController(options.scopedRevokeSubject ?? SUBJECTS.scopedRevokeRequest, [
          'Revoke',
          'Sweep',
        ]),
      ],
      providers: [
        { provide: EXECUTION_OPTIONS, useValue: options },
        {
          provide: WORKLOAD_IDENTITY,
          inject: [{ token: SERVICE_CONFIG, optional: true }],
          useFactory: (config?: Parameters<typeof workloadIdentityFromConfig>[0]): WorkloadIdentity | null =>
            options.identity !== undefined
              ? options.identity
              : config === undefined
                ? null
                : workloadIdentityFromConfig(config),
        },
        {
          provide: DATABASE_TLS,
          inject: [{ token: SERVICE_CONFIG, optional: true }],
          useFactory: (config?: Parameters<typeof databaseTlsFromConfig>[0]): DatabaseTls =>
            config === undefined ? {} : databaseTlsFromConfig(config),
        },
        cluster === undefined
          ? { provide: EXECUTION_CLUSTER, useValue: null }
          : {
              provide: EXECUTION_CLUSTER,
              inject: [NATS_CONNECTION, JetStreamPublisher],
              useFactory: (nc: NatsConnection, publisher: JetStreamPublisher): Promise<ExecutionCluster> =>
                startExecutionCluster(nc, publisher, cluster),
            },
        ExecutionClusterShutdown,
        // Role-lock sessions kept between executions, per server and login (ADR 0027), closed at shutdown.
        { provide: ROLE_LOCK_SESSIONS, useFactory: roleLockSessions },
        RoleLockSessionsShutdown,
        ExecutionService,
        ScopedExecutionService,
        {
          provide: EXECUTION_DISPATCH,
          inject: [
            { token: SERVICE_METRICS, optional: true },
            { token: SERVICE_CONFIG, optional: true },
          ],
          useFactory: (metrics?: ServiceMetrics, config?: ServerBounds) =>
            createExecutionDispatch(
              metrics,
              config?.EXECUTOR_SERVER_CONCURRENCY,
              config?.EXECUTOR_SERVER_REVOKE_CONCURRENCY,
            ),
        },
        // Scoped plans queue behind policy executions of the same database in this replica (one mutex), then
        // for a slot of their server: activations beside policy executions, revocations in their own lane.
        {
          provide: DATABASE_SERIALIZER,
          inject: [EXECUTION_DISPATCH],
          useFactory: (dispatch: ExecutionDispatch): DatabaseSerializer => ({
            run: (key, task, work, server) =>
              dispatch.mutex.run(
                key,
                server === undefined ? task : () => holdingServerSlot(dispatch, server, work, task),
                (ms) => dispatch.observeWait(ms),
                work === 'revoke',
              ),
            observeStage: (operation, stage, ms) => dispatch.observeScopedStage(operation, stage, ms),
            observeCollision: () => dispatch.observeCollision('scoped'),
          }),
        },
      ],
    };
  }
}
