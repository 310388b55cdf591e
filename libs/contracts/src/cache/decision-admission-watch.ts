// DecisionAdmissionWatch: the latest decision admission state the k8s-gateway published (ADR 0026), read from
// RP_RESOURCES with one ordered consumer on its single subject (last message first, then every new one).
// `state` is undefined until a first message arrives: readers count that as unauthenticated.
import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { decodePayload } from '../contract.js';
import {
  decisionAdmissionContract,
  decisionAdmissionSubject,
  type DecisionAdmissionV1,
} from '../messages/decision-admission.js';
import { SUBJECT_ROOT } from '../subjects.js';
import { STREAMS } from '../topology.js';

/** Options of {@link DecisionAdmissionWatch.start}. */
export type DecisionAdmissionWatchOptions = {
  /** Stream holding resource events; default `RP_RESOURCES`. */
  readonly stream?: string;
  /** Subject root; default `rp`. */
  readonly subjectRoot?: string;
  /** Where warnings go (never message contents beyond the state). */
  readonly logger: { warn(message: string): void };
};

type Listener = (state: DecisionAdmissionV1) => void;

/** Follows the decision admission state. */
export class DecisionAdmissionWatch {
  private current: DecisionAdmissionV1 | undefined;
  private readonly listeners = new Set<Listener>();
  private messages: ConsumerMessages | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly options: DecisionAdmissionWatchOptions,
  ) {}

  /** Starts following; resolves once the consumer exists (the state may still be unknown). */
  static async start(
    nc: NatsConnection,
    options: DecisionAdmissionWatchOptions,
  ): Promise<DecisionAdmissionWatch> {
    const watch = new DecisionAdmissionWatch(nc, options);
    await watch.follow();
    return watch;
  }

  /** The latest published state, or undefined before the gateway published one. */
  get state(): DecisionAdmissionV1 | undefined {
    return this.current;
  }

  /** Calls `listener` with every new state (also an unchanged one the gateway published again). */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves with the state once one arrived, or undefined after `timeoutMs` (none published yet). */
  async firstState(timeoutMs: number): Promise<DecisionAdmissionV1 | undefined> {
    if (this.current !== undefined) return this.current;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        off();
        resolve(this.current);
      }, timeoutMs);
      const off = this.onChange((state) => {
        clearTimeout(timer);
        off();
        resolve(state);
      });
    });
  }

  /** Stops following; `state` keeps the last value. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listeners.clear();
    if (this.timer) clearTimeout(this.timer);
    await this.messages?.close().catch(() => undefined);
  }

  private async follow(): Promise<void> {
    const subject = decisionAdmissionSubject(this.options.subjectRoot ?? SUBJECT_ROOT);
    const consumer = await jetstream(this.nc).consumers.get(this.options.stream ?? STREAMS.resources, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.LastPerSubject,
    });
    const messages = await consumer.consume({ max_messages: 8 });
    this.messages = messages;
    void (async () => {
      try {
        for await (const msg of messages) {
          const decoded = decodePayload(decisionAdmissionContract, msg.data);
          if (!decoded.ok) {
            this.options.logger.warn(`decision admission state skipped: ${decoded.detail}`);
            continue;
          }
          this.current = decoded.value;
          for (const listener of this.listeners) listener(decoded.value);
        }
      } catch (error) {
        if (!this.stopped)
          this.options.logger.warn(`decision admission watch failed: ${(error as Error).message}`);
      }
      if (!this.stopped) this.retry(1_000);
    })();
  }

  private retry(delayMs: number): void {
    this.timer = setTimeout(() => {
      if (this.stopped) return;
      this.follow().catch(() => this.retry(Math.min(delayMs * 2, 30_000)));
    }, delayMs);
    this.timer.unref();
  }
}
