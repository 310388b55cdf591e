// Publishes contract-checked payloads to JetStream with a message id, so a resend is de-duplicated.
// Services inject it instead of touching the NATS client; invalid outgoing payloads throw at the sender.
// With a retry policy, a publish the broker did not confirm (timeout, broker away) is sent again with
// backoff, so a short NATS outage delays a write by seconds instead of dropping it.
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodePayload, type MessageContract, type PayloadOf } from '../contract.js';
import { subjectMatches } from '../subject-match.js';
import { traceHeaders } from '../tracing/trace-context.js';
import { nakDelayMs, type BackoffPolicy } from './backoff.js';

/** Result of one publish: the stream sequence, and whether JetStream dropped it as a duplicate. */
export type PublishReceipt = { readonly stream: string; readonly seq: number; readonly duplicate: boolean };

/** How often and how patiently an unconfirmed publish is sent again. */
export type PublishRetry = {
  /** Sends in all, the first included (1 = no retry). */
  readonly attempts: number;
  /** Delay before send `n + 1` after send `n` failed: `min(maxMs, initialMs * 2^(n-1))`. */
  readonly backoff: BackoffPolicy;
};

/**
 * Default of the services: 10 sends, 250 ms doubling to 5 s between them. With the client's 5 s publish
 * timeout this rides out an outage of about a minute; beyond that the caller's own redelivery takes over.
 */
export const DEFAULT_PUBLISH_RETRY: PublishRetry = {
  attempts: 10,
  backoff: { initialMs: 250, maxMs: 5_000 },
};

/** Options of {@link JetStreamPublisher}. */
export type JetStreamPublisherOptions = {
  /** Retry policy of every publish unless the call overrides it; absent: one send. */
  readonly retry?: PublishRetry;
  /** Told about each failed send that will be retried (subject and error only, never the payload). */
  readonly onRetry?: (subject: string, attempt: number, error: Error) => void;
};

/** Per-call options of {@link JetStreamPublisher.publish}. */
export type PublishOptions = {
  /** This call's retry policy; `false` sends once (the caller keeps its own retry queue). */
  readonly retry?: PublishRetry | false;
};

/** True for a failure that sending again cannot fix (the payload is too large, the connection closed for good). */
function permanent(error: Error, connection: NatsConnection): boolean {
  return connection.isClosed() || /max.?payload/i.test(error.message);
}

/** Validating JetStream publisher. */
export class JetStreamPublisher {
  private readonly js: JetStreamClient;

  constructor(
    private readonly connection: NatsConnection,
    private readonly options: JetStreamPublisherOptions = {},
  ) {
    this.js = jetstream(connection);
  }

  /**
   * Publishes `payload` on `subject` after checking it against `contract`.
   * @param msgId de-duplication key (e.g. the command's idempotency key) within the stream's window; with
   *   retries on, pass one whenever a duplicate would matter (a send that timed out may have been stored)
   */
  async publish<C extends MessageContract>(
    contract: C,
    subject: string,
    payload: PayloadOf<C>,
    msgId?: string,
    options: PublishOptions = {},
  ): Promise<PublishReceipt> {
    if (!subjectMatches(contract.subject, subject)) {
      throw new Error(`subject ${subject} is outside contract ${contract.name} (${contract.subject})`);
    }
    const data = encodePayload(contract, payload);
    const retry = options.retry === false ? undefined : (options.retry ?? this.options.retry);
    const attempts = Math.max(1, retry?.attempts ?? 1);
    // The active span's trace context travels in the headers (none with tracing off; docs/tracing.md).
    const headers = traceHeaders();
    const sendOptions =
      msgId === undefined && headers === undefined
        ? undefined
        : { ...(msgId === undefined ? {} : { msgID: msgId }), ...(headers === undefined ? {} : { headers }) };
    for (let attempt = 1; ; attempt++) {
      try {
        const ack = await this.js.publish(subject, data, sendOptions);
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        if (retry === undefined || attempt >= attempts || permanent(error, this.connection)) throw error;
        this.options.onRetry?.(subject, attempt, error);
        await new Promise((resolve) => setTimeout(resolve, nakDelayMs(attempt, retry.backoff)));
      }
    }
  }
}
