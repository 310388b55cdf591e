// A fresh PostgreSQL database per test file on the local server, dropped (with its connections) at the end.
// The admin URL comes from RP_TEST_PG_URL, defaulting to the trust-auth local server.
import pg from 'pg';
import { sandboxId } from './ids.js';

/** Admin connection used to create and drop sandbox databases. */
export const DEFAULT_PG_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** One sandbox database. */
export type PostgresSandbox = {
  readonly database: string;
  /** Connection URL of the sandbox database. */
  readonly url: string;
  /** Drops the database, terminating any connection still open to it. */
  readonly drop: () => Promise<void>;
};

function adminUrl(): string {
  return process.env['RP_TEST_PG_URL'] ?? DEFAULT_PG_ADMIN_URL;
}

async function asAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates `rp_test_<label>_<id>`; call `drop()` in afterAll.
 * @example const db = await createPostgresSandbox('catalog'); afterAll(() => db.drop());
 */
export async function createPostgresSandbox(label = 'db'): Promise<PostgresSandbox> {
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20);
  const database = `rp_test_${safeLabel}_${sandboxId()}`;
  // The name is generated from [a-z0-9_] only, so quoting it as an identifier is sufficient.
  await asAdmin((c) => c.query(`CREATE DATABASE "${database}"`));
  const url = new URL(adminUrl());
  url.pathname = `/${database}`;
  return {
    database,
    url: url.toString(),
    drop: () =>
      asAdmin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`))),
  };
}
