// Root module of the planner: reconciles PostgresPolicies into plans, execution requests and status.
// The runtime (NATS, health, metrics, JetStream transport) is imported around it by startService.
import { Module } from '@nestjs/common';
import { ExecuteResultController } from './reconcile/execute-result.controller.js';
import { PlannerHost } from './reconcile/planner-host.js';

/** The planner's own module. */
@Module({
  controllers: [ExecuteResultController],
  providers: [PlannerHost],
})
export class PlannerModule {}
