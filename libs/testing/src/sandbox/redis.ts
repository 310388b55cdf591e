// A Redis key prefix per test file on the local server (cleanup deletes every key under it), and a private
// redis-server for fault tests (FLUSHALL, crash). BullMQ takes the prefix as its `prefix` option.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, waitForPort } from './nats-server.js';
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

/** A redis-server child process owned by a test (no persistence), for FLUSHALL and restart faults. */
export type PrivateRedis = {
  readonly url: string;
  /** Stops it (SIGKILL: every key is lost, as in a crash without persistence). */
  readonly stop: () => Promise<void>;
  /** Starts it again on the same port, empty. */
  readonly start: () => Promise<void>;
  /** FLUSHALL on this server only. */
  readonly flushAll: () => Promise<void>;
};

/** Starts `redis-server` (PATH or RP_TEST_REDIS_SERVER) on a free port without persistence. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const binary = process.env['RP_TEST_REDIS_SERVER'] ?? 'redis-server';
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await waitForPort(port);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };
  await start();
  const url = `redis://127.0.0.1:${port}`;
  return {
    url,
    stop,
    start,
    flushAll: async () => {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        await client.flushall();
      } finally {
        client.disconnect();
      }
    },
  };
}
