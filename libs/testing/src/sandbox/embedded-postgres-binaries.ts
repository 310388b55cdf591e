// Where the embedded server's binaries run from. As root the server runs as an unprivileged user, who may
// not reach a clone in a private folder (under /root, any 0700 directory), so the package's native folder is
// staged once into a cache under the temp folder that user can traverse, and the server runs from there.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  chmod,
  copyFile,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The user the server runs as when this process is root; null when it runs as this process's user. */
export type RunAs = { readonly uid: number; readonly gid: number } | null;

type Entry =
  | { readonly kind: 'dir'; readonly rel: string }
  | { readonly kind: 'file'; readonly rel: string; readonly size: number; readonly mode: number }
  | { readonly kind: 'link'; readonly rel: string; readonly target: string };

/** The folder the embedded servers keep their data and staged binaries in (`RP_EMBEDDED_PG_DIR` moves it). */
export function embeddedPostgresRoot(): string {
  const chosen = process.env['RP_EMBEDDED_PG_DIR'];
  return chosen !== undefined && chosen !== '' ? path.resolve(chosen) : path.join(tmpdir(), 'rolepolicy-pg');
}

/**
 * Makes `dir` (and the missing folders above it) with mode 0755 whatever the umask, so the server's user
 * can traverse it; a folder of another owner is left as it is.
 */
export async function sharedDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o755).catch(() => undefined);
}

/**
 * The native folder (bin, lib, share) to run the server from. When it runs as this process's user, the
 * package's own; as root, a copy under {@link embeddedPostgresRoot} (hard links where the files are
 * world-readable, else copies), made once per package version and content and reused by later runs.
 * Parallel Jest workers each build their own copy and rename it into place; the first rename wins.
 */
export async function runnableNativeDir(nativeDir: string, user: RunAs): Promise<string> {
  await hydrateSymlinks(nativeDir);
  if (user === null) return nativeDir;
  const cacheDir = path.join(embeddedPostgresRoot(), 'bin');
  await sharedDir(embeddedPostgresRoot());
  await sharedDir(cacheDir);
  await assertTraversable(cacheDir, user);
  const entries = await listTree(nativeDir);
  const key = digest(entries);
  const target = path.join(cacheDir, `${await packageVersion(nativeDir)}-${key.slice(0, 16)}`);
  if (existsSync(target) && digest(await listTree(target)) === key) return target;
  const staging = `${target}.staging-${process.pid}-${randomUUID().slice(0, 8)}`;
  try {
    await copyTree(nativeDir, staging, entries);
    try {
      await rename(staging, target);
    } catch {
      // Another worker won the race, or a damaged copy (a temp cleaner removed files) is in the way.
      if (digest(await listTree(target).catch(() => [])) === key) return target;
      await rm(target, { recursive: true, force: true });
      await rename(staging, target);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return target;
}

/** One line naming the folder and the fix, before anything starts, when `user` cannot reach `dir`. */
async function assertTraversable(dir: string, user: Exclude<RunAs, null>): Promise<void> {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const folder = path.sep + parts.slice(0, i).join(path.sep);
    const { mode, uid, gid } = await stat(folder);
    const enters =
      (mode & 0o001) !== 0 ||
      (uid === user.uid && (mode & 0o100) !== 0) ||
      (gid === user.gid && (mode & 0o010) !== 0);
    if (!enters) {
      throw new Error(
        `the embedded PostgreSQL runs as uid ${user.uid} (initdb refuses root) and cannot enter ${folder}: ` +
          `run \`chmod o+x ${folder}\`, set RP_EMBEDDED_PG_DIR to a folder every user can enter (e.g. /tmp/rolepolicy-pg), or run as a non-root user`,
      );
    }
  }
}

async function listTree(root: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(path.join(root, rel))).sort()) {
      const child = path.join(rel, name);
      const info = await lstat(path.join(root, child));
      if (info.isSymbolicLink())
        entries.push({ kind: 'link', rel: child, target: await readlink(path.join(root, child)) });
      else if (info.isDirectory()) {
        entries.push({ kind: 'dir', rel: child });
        await walk(child);
      } else entries.push({ kind: 'file', rel: child, size: info.size, mode: info.mode });
    }
  };
  await walk('');
  return entries;
}

/** The content check: every path, its kind, size or link target (modes differ between links and copies). */
function digest(entries: readonly Entry[]): string {
  const lines = entries.map((e) =>
    e.kind === 'file' ? `f ${e.rel} ${e.size}` : e.kind === 'link' ? `l ${e.rel} ${e.target}` : `d ${e.rel}`,
  );
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

async function packageVersion(nativeDir: string): Promise<string> {
  const manifest = await readFile(path.join(path.dirname(nativeDir), 'package.json'), 'utf8').catch(
    () => '{}',
  );
  const version = (JSON.parse(manifest) as { version?: unknown }).version;
  return typeof version === 'string' ? version.replace(/[^\w.-]/g, '_') : 'unknown';
}

async function copyTree(from: string, to: string, entries: readonly Entry[]): Promise<void> {
  await sharedDir(to);
  for (const entry of entries) {
    const source = path.join(from, entry.rel);
    const dest = path.join(to, entry.rel);
    if (entry.kind === 'dir') await sharedDir(dest);
    else if (entry.kind === 'link') await symlink(entry.target, dest);
    else {
      const executable = (entry.mode & 0o100) !== 0;
      // A hard link shares the file's mode: only link what every user may already read (and run).
      const open = (entry.mode & 0o004) !== 0 && (!executable || (entry.mode & 0o001) !== 0);
      const linked =
        open &&
        (await link(source, dest).then(
          () => true,
          () => false,
        ));
      if (!linked) {
        await copyFile(source, dest);
        await chmod(dest, executable ? 0o755 : 0o644);
      }
    }
  }
}

/**
 * The package's postinstall script recreates the shared-library symlinks npm cannot ship; npm may not run
 * install scripts (`ignore-scripts`), so missing links are made here (idempotent).
 */
export async function hydrateSymlinks(nativeDir: string): Promise<void> {
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
