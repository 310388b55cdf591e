// The thin JetStream handler of execution work: the transport validates the payload and acks once
// the service has published the outcome; a throw means "retry later" (nak with backoff).
import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  JETSTREAM_TRANSPORT,
  JetStreamContext,
  type ExecuteRequestV1,
  type ExecuteRequestV2,
} from '@rolepolicy/contracts';
import { ExecutionService } from './execution.service.js';

/** Builds the controller for `subject` (the spine's `rp.execute.request`, or a test sandbox subject). */
export function executeController(subject: string): Type<unknown> {
  @Controller()
  class ExecuteController {
    constructor(@Inject(ExecutionService) private readonly execution: ExecutionService) {}

    @EventPattern<string>(subject, JETSTREAM_TRANSPORT)
    async execute(
      @Payload() request: ExecuteRequestV1 | ExecuteRequestV2,
      @Ctx() context: JetStreamContext,
    ): Promise<void> {
      // On the last delivery a transient failure is reported as Failed instead of vanishing into a dead letter.
      const finalAttempt = context.getDeliveryCount() >= context.getConsumer().maxDeliver;
      await this.execution.handle(request, { finalAttempt });
    }
  }
  return ExecuteController;
}
