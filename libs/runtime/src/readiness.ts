// Dependency probes behind /readyz: each one answers within a timeout or counts as down.
// Probes never include connection URLs in their errors, because URLs may carry credentials.
import type { NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';

/** One dependency a service needs in order to do work. */
export type DependencyCheck = {
  readonly name: string;
  /** Resolves when the dependency answers; rejects otherwise. */
  readonly probe: () => Promise<void>;
  /** Releases whatever the probe holds (called at shutdown). */
  readonly close?: () => Promise<void>;
};

/** Result of probing every dependency once. */
export type ReadinessReport = {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, 'up' | 'down'>>;
};

/** Rejects when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Probes every check in parallel; a slow or failing one is reported `down`. */
export async function probeAll(
  checks: readonly DependencyCheck[],
  timeoutMs: number,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await within(c.probe(), timeoutMs, c.name);
        return [c.name, 'up'] as const;
      } catch {
        return [c.name, 'down'] as const;
      }
    }),
  );
  return { ready: results.every(([, state]) => state === 'up'), checks: Object.fromEntries(results) };
}

/** NATS answers when the connection is open and a PING round-trips (a flush). */
export function natsCheck(connection: NatsConnection): DependencyCheck {
  return {
    name: 'nats',
    probe: async () => {
      if (connection.isClosed()) throw new Error('NATS connection closed');
      await connection.flush();
    },
  };
}

/** Redis answers PING; the probe client fails fast instead of queueing while disconnected. */
export function redisCheck(url: string): DependencyCheck {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectionName: 'rp-readiness',
  });
  client.on('error', () => {
    // Reported through /readyz; ioredis would otherwise print every reconnect failure.
  });
  return {
    name: 'redis',
    probe: async () => {
      if (client.status === 'wait' || client.status === 'end') await client.connect();
      await client.ping();
    },
    close: async () => {
      client.disconnect();
    },
  };
}

/** PostgreSQL answers `SELECT 1` on a one-connection pool. */
export function postgresCheck(connectionString: string): DependencyCheck {
  const pool = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: 2000 });
  pool.on('error', () => {
    // An idle client died; the next probe reconnects and reports the outcome.
  });
  return {
    name: 'postgres',
    probe: async () => {
      await pool.query('SELECT 1');
    },
    close: () => pool.end(),
  };
}
