// Everything that rests in the bus and in Redis, as text, for secret scans: every message of every
// JetStream stream (KV buckets and object stores are streams too: KV_*, OBJ_*), every Redis value, and
// every message that crosses core NATS while a tap listens.
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';

/** One stored item: where it is and its bytes as UTF-8 text. */
export type StoredItem = { readonly where: string; readonly text: string };

/** Every message of every stream on the server `nc` is connected to. */
export async function streamContents(nc: NatsConnection): Promise<StoredItem[]> {
  const jsm = await jetstreamManager(nc);
  const items: StoredItem[] = [];
  for await (const info of jsm.streams.list()) {
    const { first_seq: first, last_seq: last } = info.state;
    for (let seq = first; seq > 0 && seq <= last; seq += 1) {
      const msg = await jsm.streams.getMessage(info.config.name, { seq }).catch(() => null);
      if (msg === null) continue; // deleted or expired
      const headers = msg.header
        ? [...msg.header.keys()].map((k) => `${k}: ${msg.header!.get(k)}`).join('\n')
        : '';
      items.push({
        where: `${info.config.name}#${seq} ${msg.subject}`,
        text: `${headers}\n${new TextDecoder().decode(msg.data)}`,
      });
    }
  }
  return items;
}

/**
 * Starts recording every message published on the server `nc` is connected to (a subscription on `>`,
 * inbox replies included) into the returned array, as `<subject>` and its headers and data as text.
 */
export function wireTap(nc: NatsConnection): StoredItem[] {
  const items: StoredItem[] = [];
  nc.subscribe('>', {
    callback: (error, msg) => {
      if (error !== null) return;
      const headers = msg.headers
        ? [...msg.headers.keys()].map((k) => `${k}: ${msg.headers!.get(k)}`).join('\n')
        : '';
      items.push({ where: msg.subject, text: `${headers}\n${new TextDecoder().decode(msg.data)}` });
    },
  });
  return items;
}

/** Every key and value of the Redis server at `url` (strings, hashes, lists, sets, sorted sets, streams). */
export async function redisContents(url: string): Promise<StoredItem[]> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const items: StoredItem[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        let value: unknown;
        if (type === 'string') value = await redis.getBuffer(key).then((b) => b?.toString('utf8'));
        else if (type === 'hash') value = await redis.hgetall(key);
        else if (type === 'list') value = await redis.lrange(key, 0, -1);
        else if (type === 'set') value = await redis.smembers(key);
        else if (type === 'zset') value = await redis.zrange(key, '0', '-1');
        else if (type === 'stream') value = await redis.xrange(key, '-', '+');
        items.push({ where: `redis ${key}`, text: `${key}\n${JSON.stringify(value)}` });
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return items;
}

/** The items containing any needle (a needle and its base64 both count), as `where: needle label`. */
export function findNeedles(
  items: readonly StoredItem[],
  needles: Readonly<Record<string, string>>,
): string[] {
  const found: string[] = [];
  for (const [label, needle] of Object.entries(needles)) {
    const forms = [needle, Buffer.from(needle, 'utf8').toString('base64'), encodeURIComponent(needle)];
    for (const item of items) {
      if (forms.some((form) => item.text.includes(form))) found.push(`${item.where}: ${label}`);
    }
  }
  return found;
}
