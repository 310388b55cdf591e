// What a fleet stage sent over the spine, for its spine floor (spine-floor.ts): every message published under
// `rp.>` (subjects, counts, sizes and a sample of payloads), the replies to its core NATS requests, and how
// many events the resource stream stored; after the stage, one object of each resource the stage wrote, as
// the floor's templates. The capture only listens: a core subscriber sees each publish once (a JetStream
// delivery to a pull consumer goes to the consumer's inbox, and only replies to core requests are kept).
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { STREAMS } from '@rolepolicy/contracts';

import { PayloadSamples, onStream, replyKey, resourceKey, resourceKindOf } from './spine-counts.js';
import { RawApi, collectionPath } from './raw-api.js';

/** What the stage sent, read by spine-floor.ts. */
export interface StageTraffic {
  /** Payloads by key: a stream or core subject, `resource:<kind>`, `reply:<request subject>`. */
  readonly payloads: PayloadSamples;
  /** Core subjects (not on a stream) that were requests (had a reply subject). */
  readonly requests: ReadonlySet<string>;
  /** Events RP_RESOURCES stored during the stage (its last sequence, after minus before). */
  readonly resourcesStored: number;
}

/** Listens to a product's NATS from {@link SpineCapture.start} until {@link SpineCapture.stop}. */
export class SpineCapture {
  private readonly payloads = new PayloadSamples();
  private readonly requests = new Set<string>();
  /** Reply subjects of core requests not answered yet, with their request subject. */
  private readonly pending = new Map<string, string>();
  private readonly subs: Subscription[] = [];
  /** Inbox prefixes listened to. */
  private readonly prefixes = new Set<string>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly lastSeqBefore: number,
  ) {}

  static async start(url: string): Promise<SpineCapture> {
    const nc = await connect({ servers: url });
    const capture = new SpineCapture(nc, await lastSeq(nc));
    capture.subs.push(
      nc.subscribe('rp.>', {
        callback: (_err, msg) => {
          const kind = resourceKindOf(msg.subject);
          if (kind !== undefined) capture.payloads.add(resourceKey(kind), msg.data);
          else if (msg.subject.startsWith('rp.resource.'))
            return; // markers: per resync, not per policy
          else capture.payloads.add(msg.subject, msg.data);
          if (msg.reply !== undefined && msg.reply !== '' && !onStream(msg.subject)) {
            capture.requests.add(msg.subject);
            capture.pending.set(msg.reply, msg.subject);
            capture.listen(msg.reply);
          }
        },
      }),
    );
    // The subscription must reach the server before the stage's first publish, or that publish goes unseen.
    await nc.flush();
    return capture;
  }

  /**
   * Listens to the inboxes of a requester (each service has its own prefix, `_INBOX_<service>`, ADR 0022)
   * from its first request on: that first reply may be missed, the sample does not need it.
   */
  private listen(reply: string): void {
    const prefix = reply.slice(0, reply.indexOf('.'));
    if (prefix === '' || this.prefixes.has(prefix)) return;
    this.prefixes.add(prefix);
    this.subs.push(
      this.nc.subscribe(`${prefix}.>`, {
        callback: (_err, msg) => {
          const request = this.pending.get(msg.subject);
          if (request === undefined) return;
          this.pending.delete(msg.subject);
          this.payloads.add(replyKey(request), msg.data);
        },
      }),
    );
  }

  async stop(): Promise<StageTraffic> {
    for (const sub of this.subs) sub.unsubscribe();
    const after = await lastSeq(this.nc);
    await this.nc.close();
    return { payloads: this.payloads, requests: this.requests, resourcesStored: after - this.lastSeqBefore };
  }
}

async function lastSeq(nc: NatsConnection): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(STREAMS.resources)).state.last_seq;
}

/** An object as the API returns it (what the floor copies). */
export type ApiObject = { metadata: Record<string, unknown> } & Record<string, unknown>;

/**
 * One object of each resource, the one of median JSON size among the namespace's (`fleet-` policies and what
 * they own; any for Events): the floor writes copies of them, so its bodies weigh what the stage's did.
 */
export async function stageTemplates(
  kc: KubeConfig,
  namespace: string,
  resources: readonly string[],
): Promise<Record<string, ApiObject>> {
  const api = new RawApi(kc);
  const out: Record<string, ApiObject> = {};
  for (const resource of resources) {
    const list = await api.get<{ apiVersion: string; kind: string; items: ApiObject[] }>(
      collectionPath(resource, namespace),
    );
    // Items of a list may leave out their own apiVersion and kind; a create needs them.
    const typed = { apiVersion: list.apiVersion, kind: list.kind.replace(/List$/, '') };
    const items = list.items
      .map((o) => ({ ...typed, ...o }))
      .map((o) => ({ o, size: JSON.stringify(o).length }))
      .sort((a, b) => a.size - b.size);
    const median = items[Math.floor(items.length / 2)];
    if (median !== undefined) out[resource] = median.o;
  }
  return out;
}
