// The thin JetStream handlers of scoped execution work (durables `executor-scoped` and, for revocations,
// `executor-scoped-revoke`, which also carries sweeps): the transport validates the payload and acks once the result is published; a
// throw means "retry later" (nak with a delay).
import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JETSTREAM_TRANSPORT, JetStreamContext, type ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import { ScopedExecutionService } from './scoped-execution.service.js';

/**
 * Builds the controller for `subject` (the spine's `rp.execute.scoped.request` or `rp.execute.scoped.revoke`,
 * or a sandbox subject). With `only`, a request of another operation is refused (reported Failed).
 */
export function scopedExecuteController(
  subject: string,
  only?: readonly ScopedExecuteRequestV1['operation'][],
): Type<unknown> {
  @Controller()
  class ScopedExecuteController {
    constructor(@Inject(ScopedExecutionService) private readonly scoped: ScopedExecutionService) {}

    @EventPattern<string>(subject, JETSTREAM_TRANSPORT)
    async execute(
      @Payload() request: ScopedExecuteRequestV1,
      @Ctx() context: JetStreamContext,
    ): Promise<void> {
      const finalAttempt = context.getDeliveryCount() >= context.getConsumer().maxDeliver;
      if (only !== undefined && !only.includes(request.operation)) {
        await this.scoped.refuse(request, {
          outcome: 'Failed',
          reason: 'WrongSubject',
          message: `${subject} carries ${only.join(' and ')} requests only; nothing was run`,
        });
        return;
      }
      // Time since the message reached the stream (the first delivery's queue, or every attempt so far).
      const queuedMs = Date.now() - context.getMessage().info.timestampNanos / 1e6;
      await this.scoped.handle(request, { finalAttempt, queuedMs });
    }
  }
  return ScopedExecuteController;
}
