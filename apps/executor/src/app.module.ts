// Root module of the executor: applies approved plans under a per-database lock.
// Execution work arrives on `rp.execute.request`; Secrets, plans and policies are read fresh from the
// k8s-gateway's resource events, and plan status is written back through gateway commands.
import { Module } from '@nestjs/common';
import { ExecutionModule } from './execution/execution.module.js';

/** The executor's own module; the shared runtime (NATS, health, metrics) is imported around it. */
@Module({
  imports: [ExecutionModule.register({ cluster: {} })],
})
export class ExecutorModule {}
