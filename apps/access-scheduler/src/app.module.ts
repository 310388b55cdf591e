// Root module of the access-scheduler: runs ephemeral access lifecycles on BullMQ timers.
// Feature modules (consumers with @EventPattern handlers, services) are added to `imports`.
import { Module } from '@nestjs/common';

/** The access-scheduler's own module; the shared runtime (NATS, health, metrics) is imported around it. */
@Module({
  imports: [],
})
export class AccessSchedulerModule {}
