// Per-test-file sandboxes on the real local servers: each gets its own database, stream names and
// Redis prefix, and cleanup removes exactly what the sandbox created.
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createNatsSandbox } from './nats.js';
import { createPostgresSandbox } from './postgres.js';
import { createRedisSandbox } from './redis.js';
import { spawnTs } from './ts-child.js';

const DROP_AND_EXIT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'test-support',
  'drop-and-exit.ts',
);

async function databaseExists(adminUrl: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const result = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return result.rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('test sandboxes', () => {
  it('a PostgreSQL sandbox is a fresh database, dropped even with a connection still open', async () => {
    const a = await createPostgresSandbox('sandbox');
    const b = await createPostgresSandbox('sandbox');
    expect(a.database).not.toBe(b.database);
    const client = new pg.Client({ connectionString: a.url });
    await client.connect();
    const tables = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.rows[0]).toEqual({ n: 0 });
    client.on('error', () => undefined);
    await a.drop();
    await b.drop();
    expect(await databaseExists(a.adminUrl, a.database)).toBe(false);
    expect(await databaseExists(b.adminUrl, b.database)).toBe(false);
  }, 30_000);

  it('a drop that outlasts its wait lets the test file go and still finishes on the server', async () => {
    const db = await createPostgresSandbox('sandbox_late');
    // A comment being written on the database holds a lock DROP DATABASE waits for, as it waits for a
    // checkpoint on a busy server.
    const holder = new pg.Client({ connectionString: db.adminUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`COMMENT ON DATABASE "${db.database}" IS 'held'`);
      const started = Date.now();
      const lines: string[] = [];
      const child = spawnTs(DROP_AND_EXIT, {
        args: [db.adminUrl, db.database, '1000'],
        onLine: (line) => lines.push(line),
      });
      // The process returns from the drop after its wait and exits on its own, the drop still pending.
      const [code] = (await once(child, 'exit')) as [number | null];
      expect({ code, lines }).toEqual({ code: 0, lines: ['returned'] });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await databaseExists(db.adminUrl, db.database)).toBe(true);
      await holder.query('ROLLBACK');
      const deadline = Date.now() + 20_000;
      while ((await databaseExists(db.adminUrl, db.database)) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await databaseExists(db.adminUrl, db.database)).toBe(false);
    } finally {
      await holder.end();
      await db.drop();
    }
  }, 60_000);

  it('a NATS sandbox names unique streams and deletes them at cleanup', async () => {
    const one = await createNatsSandbox();
    const two = await createNatsSandbox();
    expect(one.stream('work')).not.toBe(two.stream('work'));
    expect(one.subject('a.b')).toMatch(/^sbx_[0-9a-f]+\.a\.b$/);
    const nc = await connect({ servers: one.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: one.stream('work'), subjects: [one.subject('work.>')] });
      await one.cleanup();
      await two.cleanup();
      await expect(jsm.streams.info(one.stream('work'))).rejects.toThrow(/stream not found/);
    } finally {
      await nc.close();
    }
  }, 30_000);

  it('a Redis sandbox deletes only the keys under its prefix', async () => {
    const mine = createRedisSandbox();
    const other = createRedisSandbox();
    const client = new Redis(mine.url);
    try {
      await client.set(`${mine.prefix}:a`, '1');
      await client.set(`${other.prefix}:a`, '1');
      await mine.cleanup();
      expect(await client.exists(`${mine.prefix}:a`)).toBe(0);
      expect(await client.exists(`${other.prefix}:a`)).toBe(1);
      await other.cleanup();
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
