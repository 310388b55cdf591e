// The planner's handler of `rp.execute.result`: each executor outcome becomes policy status (a throw
// means "redeliver later", e.g. while the planner is still starting).
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { JETSTREAM_TRANSPORT, SUBJECTS, type ExecuteResultV1 } from '@rolepolicy/contracts';
import { PlannerHost } from './planner-host.js';

/** Consumes execution results from the planner's durable consumer. */
@Controller()
export class ExecuteResultController {
  constructor(@Inject(PlannerHost) private readonly host: PlannerHost) {}

  @EventPattern<string>(SUBJECTS.executeResult, JETSTREAM_TRANSPORT)
  async onResult(@Payload() result: ExecuteResultV1): Promise<void> {
    await this.host.handleResult(result);
  }
}
