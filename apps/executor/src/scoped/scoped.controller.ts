// The thin JetStream handler of scoped execution work (durable `executor-scoped`): the transport validates
// the payload and acks once the result is published; a throw means "retry later" (nak with a delay).
import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JETSTREAM_TRANSPORT, JetStreamContext, type ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import { ScopedExecutionService } from './scoped-execution.service.js';

/** Builds the controller for `subject` (the spine's `rp.execute.scoped.request`, or a sandbox subject). */
export function scopedExecuteController(subject: string): Type<unknown> {
  @Controller()
  class ScopedExecuteController {
    constructor(@Inject(ScopedExecutionService) private readonly scoped: ScopedExecutionService) {}

    @EventPattern<string>(subject, JETSTREAM_TRANSPORT)
    async execute(
      @Payload() request: ScopedExecuteRequestV1,
      @Ctx() context: JetStreamContext,
    ): Promise<void> {
      const finalAttempt = context.getDeliveryCount() >= context.getConsumer().maxDeliver;
      await this.scoped.handle(request, { finalAttempt });
    }
  }
  return ScopedExecuteController;
}
