// Root module of the executor: applies approved plans under a per-database lock.
// Execution work arrives on `rp.execute.request`; secrets come from the resolver registered here.
import { Module } from '@nestjs/common';
import { ExecutionModule } from './execution/execution.module.js';
import { gatewaySecretsNotWired } from './execution/secrets.js';

/** The executor's own module; the shared runtime (NATS, health, metrics) is imported around it. */
@Module({
  imports: [ExecutionModule.register({ secrets: gatewaySecretsNotWired })],
})
export class ExecutorModule {}
