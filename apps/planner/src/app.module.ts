// Root module of the planner: turns desired state plus a snapshot into plans, approvals and candidates.
// Feature modules (consumers with @EventPattern handlers, services) are added to `imports`.
import { Module } from '@nestjs/common';

/** The planner's own module; the shared runtime (NATS, health, metrics) is imported around it. */
@Module({
  imports: [],
})
export class PlannerModule {}
