// What an execution costs the resource stream, as any subscriber sees it: the JetStream API requests about
// RP_RESOURCES (stream and consumer infos of the cache's syncs) and the naks of the requests' stream.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

/** JetStream API requests and acks about a test file's streams, as any subscriber sees them. */
export class ApiTraffic {
  readonly api: string[] = [];
  readonly naks: string[] = [];
  private readonly subs: Subscription[] = [];

  constructor(
    nc: NatsConnection,
    private readonly resourceStream: string,
    executeStream: string,
  ) {
    this.subs.push(
      nc.subscribe('$JS.API.>', {
        callback: (_error, msg) => {
          // Pull renewals of every consumer tick on their own clock: not a cost of one execution.
          if (msg.subject.includes(resourceStream) && !msg.subject.includes('.MSG.NEXT.')) {
            this.api.push(msg.subject);
          }
        },
      }),
      nc.subscribe('$JS.ACK.>', {
        callback: (_error, msg) => {
          if (msg.subject.includes(executeStream) && msg.string().startsWith('-NAK'))
            this.naks.push(msg.subject);
        },
      }),
    );
  }

  /** Requests about the resource stream since `from` (an index into {@link api}), by kind of request. */
  since(from: number): { total: number; streamInfo: number; consumerInfo: number } {
    const seen = this.api.slice(from);
    return {
      total: seen.length,
      streamInfo: seen.filter((s) => s.startsWith('$JS.API.STREAM.INFO.')).length,
      consumerInfo: seen.filter((s) => s.startsWith('$JS.API.CONSUMER.INFO.')).length,
    };
  }

  stop(): void {
    for (const sub of this.subs) sub.unsubscribe();
  }
}
