// Nest CustomTransportStrategy over JetStream durable pull consumers: handlers stay plain
// @EventPattern/@MessagePattern methods while the transport owns validation, ack, nak and dead letters.
import { Server, type CustomTransportStrategy } from '@nestjs/microservices';
import {
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom } from 'rxjs';
import { decodePayload, encodePayload, type MessageContract } from '../contract.js';
import { deadLetterContract, type DeadLetterV1 } from '../messages/dead-letter.js';
import { patternsOverlap, subjectMatches } from '../subject-match.js';
import { bindTopology, ensureTopology } from '../ensure-topology.js';
import { ensureStores } from '../stores.js';
import type { ConsumerDefinition, Topology } from '../topology.js';
import { DEFAULT_BACKOFF, nakDelayMs, type BackoffPolicy } from './backoff.js';
import { JetStreamContext } from './jetstream.context.js';
import type { MessageOutcome, OutcomeObserver } from './outcome.js';
import { slotsFor, type SlotCounts } from './slots.js';
import { contextFromHeaders } from '../tracing/trace-context.js';
import { SPAN_ATTRIBUTES, SpanKind, inSpan, tracingActive, type InSpanOptions } from '../tracing/spans.js';

/**
 * Transport id of {@link JetStreamServer}: pass it as the second argument of `@EventPattern` when an app
 * also runs Nest's core NATS transport, so a handler is bound to exactly one of them.
 */
export const JETSTREAM_TRANSPORT: unique symbol = Symbol('rp.jetstream');

/** Options of {@link JetStreamServer}. */
export type JetStreamServerOptions = {
  /** An open connection owned by the caller (the transport never closes it). */
  readonly connection: NatsConnection;
  /** Streams and candidate consumers; all are ensured at start, consumers run only if a handler needs them. */
  readonly topology: Topology;
  /**
   * `ensure` (default): create or update the topology (the topology owner, and test sandboxes). `bind`: wait
   * until it exists and create nothing (every service but the owner, ADR 0022).
   */
  readonly topologyAccess?: 'ensure' | 'bind';
  /**
   * With `ensure`: also create the leader lease bucket and the snapshot object store (the topology owner at
   * start, ADR 0022), which no other user may create.
   */
  readonly ensureStores?: boolean;
  /** Payload contracts; a message on a subject without a contract is dead-lettered. */
  readonly contracts: readonly MessageContract[];
  /** Where a message goes when it is refused or its redeliveries run out. */
  readonly deadLetterSubject: (subject: string) => string;
  readonly backoff?: BackoffPolicy;
  readonly observe?: OutcomeObserver;
  /**
   * Messages handled at once per consumer (default 1): one number for every durable, or a default plus
   * counts by durable name ({@link SlotCounts}). Each slot pulls exactly one message when it is free, so a
   * replica never holds messages it is not working on.
   */
  readonly concurrency?: SlotCounts;
  /** The service serving the handlers: names the consumer spans (docs/tracing.md). */
  readonly service?: string;
};

type Failure = { readonly reason: DeadLetterV1['reason']; readonly detail: string };

const RESTART_DELAY_MS = 1_000;
/** How long one pull waits on the server for a message before it is renewed. */
const PULL_EXPIRES_MS = 30_000;

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && 'message' in err)
    return String((err as { message: unknown }).message);
  return String(err);
}

/**
 * JetStream transport. Per message: decode and validate against its contract (refused -> dead letter),
 * run the matching handler, ack on success, nak with exponential backoff when it throws, dead-letter
 * once the consumer's maxDeliver is reached. Nothing a message does can stop the consumer loop.
 * @example app.connectMicroservice({ strategy: new JetStreamServer({ connection, topology, contracts, deadLetterSubject }) })
 */
export class JetStreamServer extends Server implements CustomTransportStrategy {
  override readonly transportId = JETSTREAM_TRANSPORT;
  private readonly js: JetStreamClient;
  private readonly running = new Set<ConsumerMessages>();
  private readonly loops: Promise<void>[] = [];
  private closed = false;

  constructor(private readonly options: JetStreamServerOptions) {
    super();
    this.js = jetstream(options.connection);
  }

  /** Ensures the topology, then starts one pull loop per consumer that some handler needs. */
  listen(callback: (...optionalParams: unknown[]) => void): void {
    this.start().then(
      () => callback(),
      (err: unknown) => callback(err),
    );
  }

  /** Stops pulling; messages in flight finish (and ack) before the returned promise settles. */
  async close(): Promise<void> {
    this.closed = true;
    for (const messages of this.running) messages.stop();
    await Promise.allSettled(this.loops);
  }

  /** Nest's status events are not emitted by this transport. */
  on(): void {
    // Connection status is watched by the readiness check, which owns the connection.
  }

  /** The underlying NATS connection. */
  unwrap<T>(): T {
    return this.options.connection as T;
  }

  /** Durable consumers that are actually pulled (those whose filter overlaps a handler pattern). */
  activeConsumers(): readonly ConsumerDefinition[] {
    const patterns = [...this.getHandlers().keys()];
    return this.options.topology.consumers.filter((c) =>
      patterns.some((p) => patternsOverlap(p, c.filterSubject)),
    );
  }

  private async start(): Promise<void> {
    const jsm = await jetstreamManager(this.options.connection);
    if (this.options.topologyAccess === 'bind')
      await bindTopology(jsm, this.options.topology, { waiting: (message) => this.logger.warn(message) });
    else {
      await ensureTopology(jsm, this.options.topology);
      if (this.options.ensureStores === true) await ensureStores(this.options.connection);
    }
    for (const def of this.activeConsumers()) {
      const slots = slotsFor(this.options.concurrency, def.durable);
      this.logger.log(`pulling ${def.stream}/${def.durable} (${def.filterSubject}), ${slots} at once`);
      for (let slot = 0; slot < slots; slot++) this.loops.push(this.pull(def));
    }
  }

  /**
   * One slot of a durable: pull one message, handle it, pull the next. A slot never prefetches (a
   * `consume()` refills its buffer as soon as a message arrives, so a busy replica would hoard messages
   * that idle replicas could run, each ageing towards ack_wait). Survives server restarts and any
   * per-message failure.
   */
  private async pull(def: ConsumerDefinition): Promise<void> {
    while (!this.closed) {
      try {
        const consumer = await this.js.consumers.get(def.stream, def.durable);
        while (!this.closed) {
          const batch = await consumer.fetch({ max_messages: 1, expires: PULL_EXPIRES_MS });
          this.running.add(batch);
          if (this.closed) batch.stop();
          try {
            for await (const m of batch) await this.process(def, m);
          } finally {
            this.running.delete(batch);
          }
        }
      } catch (err) {
        if (this.closed) break;
        this.logger.warn(`consumer ${def.durable} stopped (${errorMessage(err)}); restarting`);
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      }
    }
  }

  private report(outcome: MessageOutcome): void {
    try {
      this.options.observe?.(outcome);
    } catch {
      // Metrics must never decide the fate of a message.
    }
  }

  private handlerPatternFor(subject: string): string | undefined {
    const patterns = [...this.getHandlers().keys()];
    return patterns.find((p) => p === subject) ?? patterns.find((p) => subjectMatches(p, subject));
  }

  private async process(def: ConsumerDefinition, m: JsMsg): Promise<void> {
    try {
      const contract = this.options.contracts.find((c) => subjectMatches(c.subject, m.subject));
      if (!contract) {
        await this.deadLetter(def, m, {
          reason: 'no_contract',
          detail: `no contract covers subject ${m.subject}`,
        });
        return;
      }
      const decoded = decodePayload(contract, m.data);
      if (!decoded.ok) {
        await this.deadLetter(def, m, {
          reason: 'invalid_payload',
          detail: `${decoded.reason}: ${decoded.detail}`,
        });
        return;
      }
      const pattern = this.handlerPatternFor(m.subject);
      const handler = pattern === undefined ? null : this.getHandlerByPattern(pattern);
      if (!handler) {
        // The consumer's filter is wider than this app's handlers (e.g. all resource kinds): not an error.
        m.ack();
        this.report({ kind: 'ignored', consumer: def.durable, subject: m.subject });
        return;
      }
      await this.invoke(def, m, decoded.value, handler);
    } catch (err) {
      // Last line of defence: leave the message to ack_wait redelivery and keep the loop alive.
      this.logger.error(`consumer ${def.durable}: unexpected failure on ${m.subject}: ${errorMessage(err)}`);
    }
  }

  private async invoke(
    def: ConsumerDefinition,
    m: JsMsg,
    payload: unknown,
    handler: NonNullable<ReturnType<Server['getHandlerByPattern']>>,
  ): Promise<void> {
    // Tell JetStream the message is still in progress, so a slow handler is not redelivered to a replica.
    const heartbeat = setInterval(() => m.working(), Math.max(250, Math.floor(def.ackWaitMs / 3)));
    try {
      const run = async (): Promise<void> => {
        const result: unknown = await handler(payload, new JetStreamContext([m, def]));
        await lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
      };
      // With tracing on, in a consumer span continuing the sender's trace (docs/tracing.md).
      await (tracingActive() ? inSpan(`${def.durable} process`, this.spanOptions(m), run) : run());
    } catch (err) {
      clearInterval(heartbeat);
      await this.failed(def, m, err);
      return;
    }
    clearInterval(heartbeat);
    await m.ackAck();
    this.report({ kind: 'handled', consumer: def.durable, subject: m.subject });
  }

  private spanOptions(m: JsMsg): InSpanOptions {
    return {
      kind: SpanKind.CONSUMER,
      parent: contextFromHeaders(m.headers),
      attributes: {
        [SPAN_ATTRIBUTES.service]: this.options.service ?? 'unknown',
        [SPAN_ATTRIBUTES.messagingSystem]: 'nats',
        [SPAN_ATTRIBUTES.messagingDestination]: m.subject,
        [SPAN_ATTRIBUTES.deliveryCount]: m.info.deliveryCount,
      },
    };
  }

  private async failed(def: ConsumerDefinition, m: JsMsg, err: unknown): Promise<void> {
    const deliveryCount = m.info.deliveryCount;
    if (deliveryCount >= def.maxDeliver) {
      const detail = `handler failed on delivery ${deliveryCount} of ${def.maxDeliver}: ${errorMessage(err)}`;
      await this.deadLetter(def, m, { reason: 'redelivery_exhausted', detail });
      return;
    }
    const delayMs = nakDelayMs(deliveryCount, this.options.backoff ?? DEFAULT_BACKOFF);
    this.logger.warn(
      `${def.durable}: ${m.subject} failed on delivery ${deliveryCount}, retry in ${delayMs} ms: ${errorMessage(err)}`,
    );
    m.nak(delayMs);
    this.report({ kind: 'retried', consumer: def.durable, subject: m.subject, deliveryCount, delayMs });
  }

  /** Publishes the dead letter, then acks the original so it leaves the work queue. */
  private async deadLetter(def: ConsumerDefinition, m: JsMsg, failure: Failure): Promise<void> {
    const letter: DeadLetterV1 = {
      v: 1,
      reason: failure.reason,
      detail: failure.detail.slice(0, 4096),
      subject: m.subject,
      stream: def.stream,
      consumer: def.durable,
      streamSequence: m.seq,
      deliveryCount: m.info.deliveryCount,
      deadLetteredAt: new Date().toISOString(),
      data: Buffer.from(m.data).toString('base64'),
    };
    const target = this.options.deadLetterSubject(m.subject);
    // The msgID makes a retried dead-lettering of the same delivery land only once.
    await this.js.publish(target, encodePayload(deadLetterContract, letter), {
      msgID: `${def.stream}:${m.seq}`,
    });
    this.logger.error(
      `${def.durable}: dead-lettered ${m.subject} #${m.seq} to ${target}: ${failure.reason}: ${failure.detail}`,
    );
    await m.ackAck();
    this.report({ kind: 'dead_lettered', consumer: def.durable, subject: m.subject, reason: failure.reason });
  }
}
