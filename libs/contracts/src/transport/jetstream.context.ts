// Context handed to JetStream handlers via `@Ctx()`: the raw message and the consumer it came from.
// Handlers rarely need it; the transport acks and naks on their behalf.
import { BaseRpcContext } from '@nestjs/microservices';
import type { JsMsg } from '@nats-io/jetstream';
import type { ConsumerDefinition } from '../topology.js';

/** `@Ctx()` value for handlers served by {@link JetStreamServer}. */
export class JetStreamContext extends BaseRpcContext<[JsMsg, ConsumerDefinition]> {
  /** The JetStream message (subject, headers, delivery info). */
  getMessage(): JsMsg {
    return this.args[0];
  }

  /** Concrete subject the message was published on. */
  getSubject(): string {
    return this.args[0].subject;
  }

  /** 1 on first delivery, then 2, 3 ... up to the consumer's maxDeliver. */
  getDeliveryCount(): number {
    return this.args[0].info.deliveryCount;
  }

  /** The durable consumer that delivered the message. */
  getConsumer(): ConsumerDefinition {
    return this.args[1];
  }
}
