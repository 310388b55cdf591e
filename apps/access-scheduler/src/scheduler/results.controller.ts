// The access-scheduler's handler of `rp.execute.scoped.result`: each executor outcome becomes scoped plan
// and request status (a throw means "redeliver later", e.g. while the scheduler is still starting).
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { JETSTREAM_TRANSPORT, SUBJECTS, type ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { SchedulerHost } from './host.js';

/** Consumes scoped execution results from the durable `access-scheduler-scoped-results`. */
@Controller()
export class ScopedResultController {
  constructor(@Inject(SchedulerHost) private readonly host: SchedulerHost) {}

  @EventPattern<string>(SUBJECTS.scopedExecuteResult, JETSTREAM_TRANSPORT)
  async onResult(@Payload() result: ScopedExecuteResultV1): Promise<void> {
    await this.host.handleResult(result);
  }
}
