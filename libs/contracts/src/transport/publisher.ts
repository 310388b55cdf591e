// Publishes contract-checked payloads to JetStream with a message id, so a resend is de-duplicated.
// Services inject it instead of touching the NATS client; invalid outgoing payloads throw at the sender.
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodePayload, type MessageContract, type PayloadOf } from '../contract.js';
import { subjectMatches } from '../subject-match.js';

/** Result of one publish: the stream sequence, and whether JetStream dropped it as a duplicate. */
export type PublishReceipt = { readonly stream: string; readonly seq: number; readonly duplicate: boolean };

/** Validating JetStream publisher. */
export class JetStreamPublisher {
  private readonly js: JetStreamClient;

  constructor(connection: NatsConnection) {
    this.js = jetstream(connection);
  }

  /**
   * Publishes `payload` on `subject` after checking it against `contract`.
   * @param msgId de-duplication key (e.g. the command's idempotency key) within the stream's window
   */
  async publish<C extends MessageContract>(
    contract: C,
    subject: string,
    payload: PayloadOf<C>,
    msgId?: string,
  ): Promise<PublishReceipt> {
    if (!subjectMatches(contract.subject, subject)) {
      throw new Error(`subject ${subject} is outside contract ${contract.name} (${contract.subject})`);
    }
    const ack = await this.js.publish(
      subject,
      encodePayload(contract, payload),
      msgId === undefined ? undefined : { msgID: msgId },
    );
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
  }
}
