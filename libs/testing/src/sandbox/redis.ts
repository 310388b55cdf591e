// A Redis key prefix per test file on the local server; cleanup deletes every key under it.
// BullMQ takes the same value as its `prefix` option, so queues of two test files never meet.
import { Redis } from 'ioredis';
import { sandboxId } from './ids.js';

/** Redis URL of the shared local server, overridable with RP_TEST_REDIS_URL. */
export function localRedisUrl(): string {
  return process.env['RP_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
}

/** One Redis sandbox. */
export type RedisSandbox = {
  readonly url: string;
  /** Key prefix, e.g. `rp-test-<id>`; use `${prefix}:` for keys or as BullMQ's prefix. */
  readonly prefix: string;
  /** Deletes every key under the prefix. */
  readonly cleanup: () => Promise<void>;
};

/** Creates a Redis sandbox on the local server (or `url`). */
export function createRedisSandbox(url: string = localRedisUrl()): RedisSandbox {
  const prefix = `rp-test-${sandboxId()}`;
  return {
    url,
    prefix,
    cleanup: async () => {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          if (keys.length > 0) await client.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        client.disconnect();
      }
    },
  };
}
