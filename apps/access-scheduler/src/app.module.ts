// Root module of the access-scheduler: runs ephemeral access lifecycles on BullMQ timers.
// The runtime (NATS, health, metrics, JetStream transport) is imported around it by startService.
import { Module } from '@nestjs/common';
import { SchedulerHost } from './scheduler/host.js';
import { ScopedResultController } from './scheduler/results.controller.js';

/** The access-scheduler's own module. */
@Module({
  controllers: [ScopedResultController],
  providers: [SchedulerHost],
})
export class AccessSchedulerModule {}
