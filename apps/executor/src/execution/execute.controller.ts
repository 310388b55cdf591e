// The thin JetStream handler of execution work: the transport validates the payload, keeps the message
// in progress (heartbeats) and acks once the service has published the outcome; a throw means "retry
// later" (nak with backoff). Several requests run at once per replica (EXECUTOR_CONCURRENCY); requests for
// one database pass the in-process mutex one at a time before they reach the advisory lock.
import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import {
  JETSTREAM_TRANSPORT,
  JetStreamContext,
  type ExecuteRequestV1,
  type ExecuteRequestV2,
} from '@rolepolicy/contracts';
import { ExecutionError } from '@rolepolicy/catalog';
import { databaseKey } from './database-mutex.js';
import { EXECUTION_DISPATCH, type ExecutionDispatch } from './dispatch.js';
import { ExecutionService } from './execution.service.js';

/** Builds the controller for `subject` (the spine's `rp.execute.request`, or a test sandbox subject). */
export function executeController(subject: string): Type<unknown> {
  @Controller()
  class ExecuteController {
    constructor(
      @Inject(ExecutionService) private readonly execution: ExecutionService,
      @Inject(EXECUTION_DISPATCH) private readonly dispatch: ExecutionDispatch,
    ) {}

    @EventPattern<string>(subject, JETSTREAM_TRANSPORT)
    async execute(
      @Payload() request: ExecuteRequestV1 | ExecuteRequestV2,
      @Ctx() context: JetStreamContext,
    ): Promise<void> {
      // On the last delivery a transient failure is reported as Failed instead of vanishing into a dead letter.
      const finalAttempt = context.getDeliveryCount() >= context.getConsumer().maxDeliver;
      const run = async (): Promise<void> => {
        try {
          await this.execution.handle(request, { finalAttempt });
        } catch (error) {
          if (error instanceof ExecutionError && error.concurrentUpdate)
            this.dispatch.observeCollision('policy');
          throw error;
        }
      };
      // A v1 request is answered at once without touching a database.
      if (request.v === 1) return run();
      await this.dispatch.mutex.run(databaseKey(request), run, (ms) => this.dispatch.observeWait(ms));
    }
  }
  return ExecuteController;
}
