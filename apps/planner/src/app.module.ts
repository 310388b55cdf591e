// Root module of the planner: reconciles PostgresPolicies into plans, execution requests and status.
// The runtime (NATS, health, metrics, JetStream transport) is imported around it by startService.
// Execution results are pulled by the leader only (PlannerHost, ADR 0011), not through a controller.
import { Module } from '@nestjs/common';
import { PlannerHost } from './reconcile/planner-host.js';

/** The planner's own module. */
@Module({
  providers: [PlannerHost],
})
export class PlannerModule {}
