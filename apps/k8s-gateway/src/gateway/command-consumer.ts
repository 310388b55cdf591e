// Pulls k8s-gateway commands from their durable JetStream consumer, but only while this replica leads:
// a standby pulls nothing, so commands never bounce between replicas. Up to `concurrency` commands are in
// flight; commands with the same ordering key are applied one at a time in stream order (a per-key queue),
// commands with different keys side by side. Validation, ack, nak with backoff and dead letters follow the
// spine's transport rules (libs/contracts).
import { jetstream, type ConsumerMessages, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { trace } from '@opentelemetry/api';
import {
  SPAN_ATTRIBUTES,
  SpanKind,
  contextFromHeaders,
  inSpan,
  tracingActive,
  decodePayload,
  deadLetterContract,
  encodePayload,
  nakDelayMs,
  type BackoffPolicy,
  type ConsumerDefinition,
  type DeadLetterV1,
  type K8sCommandV1,
  type MessageContract,
  type MessageOutcome,
  type OutcomeObserver,
} from '@rolepolicy/contracts';
import { KeyedMutex, logRecord, type LogRecord } from '@rolepolicy/runtime';
import { describeOutcome, dispositionOf, type CommandOutcome } from './command-outcome.js';

/** Options of {@link CommandConsumer}. */
export type CommandConsumerOptions = {
  readonly consumer: ConsumerDefinition;
  /** The command contract (its subject may be a test sandbox's). */
  readonly contract: MessageContract;
  readonly deadLetterSubject: (subject: string) => string;
  readonly backoff: BackoffPolicy;
  /**
   * Applies one command; `streamSequence` is its position in the command stream (leader fencing), `subject`
   * the subject it came on, which names its sender (ADR 0022).
   */
  readonly apply: (command: K8sCommandV1, streamSequence: number, subject: string) => Promise<CommandOutcome>;
  /** Called for outcomes the sender must hear about (stale, rejected); must not throw. */
  readonly report: (command: K8sCommandV1, outcome: CommandOutcome) => Promise<void>;
  readonly log: {
    log(message: string | LogRecord): void;
    warn(message: string | LogRecord): void;
    error(message: string | LogRecord): void;
  };
  /** Metrics feed (the runtime's message counters); must not throw. */
  readonly observe?: OutcomeObserver;
  /** Commands in flight at once (default 1: strictly one at a time in stream order). */
  readonly concurrency?: number;
};

/** The queue of commands sent without an ordering key: applied in stream order among themselves. */
const UNKEYED = '';

const RESTART_DELAY_MS = 1_000;

/** One leader term's command loop. */
export class CommandConsumer {
  private readonly js: JetStreamClient;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private stopped = true;
  /** One queue per ordering key. */
  private readonly order = new KeyedMutex();
  /** Commands received and not yet acked, nakked or dead-lettered. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Resolves the wait for a free slot. */
  private slotFreed: (() => void) | undefined;

  constructor(
    connection: NatsConnection,
    private readonly options: CommandConsumerOptions,
  ) {
    this.js = jetstream(connection);
  }

  /** Starts pulling. */
  start(): void {
    this.stopped = false;
    this.loop = this.run();
  }

  /** Stops pulling; the messages in flight finish first. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    this.slotFreed?.();
    await this.loop;
    await Promise.all([...this.inFlight]);
  }

  private get concurrency(): number {
    const n = this.options.concurrency ?? 1;
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`command concurrency must be a positive integer, got ${n}`);
    return n;
  }

  private async run(): Promise<void> {
    const def = this.options.consumer;
    const slots = this.concurrency;
    while (!this.stopped) {
      try {
        const consumer = await this.js.consumers.get(def.stream, def.durable);
        this.messages = await consumer.consume({ max_messages: slots });
        // stop() may have run while consume() was pending; it could not stop what did not exist yet.
        if (this.stopped) this.messages.stop();
        for await (const m of this.messages) {
          this.admit(m);
          // Take the next message only with a slot free (the consumer's buffer holds at most `slots`).
          while (this.inFlight.size >= slots && !this.stopped) {
            await new Promise<void>((resolve) => (this.slotFreed = resolve));
          }
        }
      } catch (err) {
        if (this.stopped) break;
        this.options.log.warn(`command consumer ${def.durable} stopped (${String(err)}); restarting`);
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      }
    }
  }

  /** Queues one received message behind its ordering key; it holds a slot until it is settled. */
  private admit(m: JsMsg): void {
    // In progress from receipt: a command waiting behind its key must not reach ack_wait and be redelivered.
    const heartbeat = setInterval(
      () => m.working(),
      Math.max(250, Math.floor(this.options.consumer.ackWaitMs / 3)),
    );
    const settled = this.settle(m)
      .catch((err: unknown) => {
        // Left to ack_wait redelivery; the loop and the other keys go on.
        this.options.log.error(`command #${m.seq} on ${m.subject}: unexpected failure: ${String(err)}`);
      })
      .finally(() => {
        clearInterval(heartbeat);
        this.inFlight.delete(settled);
        this.slotFreed?.();
      });
    this.inFlight.add(settled);
  }

  private async settle(m: JsMsg): Promise<void> {
    const decoded = decodePayload(this.options.contract, m.data);
    if (!decoded.ok) {
      await this.deadLetter(m, 'invalid_payload', `${decoded.reason}: ${decoded.detail}`);
      return;
    }
    const command = decoded.value as K8sCommandV1;
    await this.order.run(command.orderingKey ?? UNKEYED, () => this.processInSpan(m, command));
  }

  /** {@link process} in a consumer span continuing the sender's trace (docs/tracing.md). */
  private processInSpan(m: JsMsg, command: K8sCommandV1): Promise<void> {
    if (!tracingActive()) return this.process(m, command);
    const attributes = {
      [SPAN_ATTRIBUTES.service]: 'k8s-gateway',
      [SPAN_ATTRIBUTES.command]: command.command,
      [SPAN_ATTRIBUTES.kind]: command.target.kind,
      [SPAN_ATTRIBUTES.namespace]: command.target.namespace,
      [SPAN_ATTRIBUTES.name]: command.target.name,
      [SPAN_ATTRIBUTES.messagingSystem]: 'nats',
      [SPAN_ATTRIBUTES.messagingDestination]: m.subject,
      [SPAN_ATTRIBUTES.deliveryCount]: m.info.deliveryCount,
    };
    const parent = contextFromHeaders(m.headers);
    return inSpan(
      `k8s-gateway command ${command.command}`,
      { kind: SpanKind.CONSUMER, parent, attributes },
      () => this.process(m, command),
    );
  }

  private async process(m: JsMsg, command: K8sCommandV1): Promise<void> {
    const outcome = await this.options.apply(command, m.seq, m.subject);
    trace.getActiveSpan()?.setAttribute(SPAN_ATTRIBUTES.outcome, outcome.kind);
    const where = `${command.command} ${command.target.kind} ${command.target.namespace}/${command.target.name}`;
    const fields = {
      command: command.command,
      kind: command.target.kind,
      namespace: command.target.namespace,
      name: command.target.name,
    };
    switch (dispositionOf(outcome)) {
      case 'ack':
        await m.ackAck();
        this.observe({ kind: 'handled', consumer: this.options.consumer.durable, subject: m.subject });
        return;
      case 'report':
        this.options.log.warn(
          logRecord(`${where}: ${describeOutcome(outcome)}`, { ...fields, outcome: outcome.kind }),
        );
        await this.options.report(command, outcome);
        await m.ackAck();
        this.observe({ kind: 'handled', consumer: this.options.consumer.durable, subject: m.subject });
        return;
      case 'drop':
        this.options.log.warn(
          logRecord(`${where}: ${describeOutcome(outcome)}`, { ...fields, outcome: outcome.kind }),
        );
        await m.ackAck();
        this.observe({ kind: 'handled', consumer: this.options.consumer.durable, subject: m.subject });
        return;
      case 'redeliver': {
        const def = this.options.consumer;
        const count = m.info.deliveryCount;
        if (count >= def.maxDeliver) {
          await this.deadLetter(m, 'redelivery_exhausted', `${where}: ${outcome.kind} on delivery ${count}`);
          return;
        }
        const delay = nakDelayMs(count, this.options.backoff);
        this.options.log.warn(
          logRecord(`${where}: ${outcome.kind}; redelivering in ${delay} ms`, {
            ...fields,
            outcome: outcome.kind,
          }),
        );
        m.nak(delay);
        this.observe({
          kind: 'retried',
          consumer: def.durable,
          subject: m.subject,
          deliveryCount: count,
          delayMs: delay,
        });
        return;
      }
      default:
        return;
    }
  }

  private async deadLetter(m: JsMsg, reason: DeadLetterV1['reason'], detail: string): Promise<void> {
    const def = this.options.consumer;
    const letter: DeadLetterV1 = {
      v: 1,
      reason,
      detail: detail.slice(0, 4096),
      subject: m.subject,
      stream: def.stream,
      consumer: def.durable,
      streamSequence: m.seq,
      deliveryCount: m.info.deliveryCount,
      deadLetteredAt: new Date().toISOString(),
      data: Buffer.from(m.data).toString('base64'),
    };
    await this.js.publish(
      this.options.deadLetterSubject(m.subject),
      encodePayload(deadLetterContract, letter),
      {
        msgID: `${def.stream}:${m.seq}`,
      },
    );
    this.options.log.error(`dead-lettered ${m.subject} #${m.seq}: ${reason}: ${detail}`);
    await m.ackAck();
    this.observe({ kind: 'dead_lettered', consumer: def.durable, subject: m.subject, reason });
  }

  private observe(outcome: MessageOutcome): void {
    try {
      this.options.observe?.(outcome);
    } catch {
      // Metrics never decide the fate of a command.
    }
  }
}
