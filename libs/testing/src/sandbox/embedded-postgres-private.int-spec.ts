// A newcomer's clone in a private folder (under /root, any 0700 directory): as root the embedded server runs
// as an unprivileged user who cannot enter that folder, yet the sandbox still starts and answers.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgresFrom } from './embedded-postgres.js';

const run = promisify(execFile);

/** A private clone's copy of the PostgreSQL 18 package (hard links where possible, as `cp -al` makes them). */
async function privateClone(): Promise<{ root: string; nativeDir: string }> {
  const root = await mkdtemp(path.join(tmpdir(), 'rp-private-clone-'));
  await chmod(root, 0o700);
  const { pg_ctl } = (await import('postgres-linux-x64-18')) as { pg_ctl: string };
  const installed = path.dirname(path.dirname(path.dirname(pg_ctl)));
  const packageDir = path.join(root, 'node_modules', 'postgres-linux-x64-18');
  await run('mkdir', ['-p', path.dirname(packageDir)]);
  await run('cp', ['-al', installed, packageDir]).catch(() => run('cp', ['-a', installed, packageDir]));
  return { root, nativeDir: path.join(packageDir, 'native') };
}

describe('embedded PostgreSQL from a private clone', () => {
  it('starts from a 0700 directory and answers a query', async () => {
    const clone = await privateClone();
    try {
      const server = await startEmbeddedPostgresFrom(18, clone.nativeDir);
      const client = new pg.Client({ connectionString: server.adminUrl });
      try {
        await client.connect();
        await client.query('CREATE TABLE newcomer (id int)');
        await client.query('INSERT INTO newcomer VALUES (27)');
        const { rows } = await client.query<{ id: number; v: string }>(
          "SELECT id, current_setting('server_version_num') AS v FROM newcomer",
        );
        expect(rows).toEqual([{ id: 27, v: expect.stringMatching(/^18/) }]);
      } finally {
        await client.end();
        await server.stop();
      }
      // stop() right after start stops the server (its watchdog is listening by then).
      const late = new pg.Client({ connectionString: server.adminUrl, connectionTimeoutMillis: 5000 });
      await expect(late.connect()).rejects.toThrow();
      await late.end().catch(() => undefined);
    } finally {
      await rm(clone.root, { recursive: true, force: true });
    }
  }, 120_000);

  it('a data folder the server user cannot enter stops before starting, with one line naming it and the fix', async () => {
    const privateTmp = await mkdtemp(path.join(tmpdir(), 'rp-private-tmp-'));
    await chmod(privateTmp, 0o700);
    const { pg_ctl } = (await import('postgres-linux-x64-18')) as { pg_ctl: string };
    const saved = process.env['RP_EMBEDDED_PG_DIR'];
    process.env['RP_EMBEDDED_PG_DIR'] = path.join(privateTmp, 'rolepolicy-pg');
    try {
      const starting = startEmbeddedPostgresFrom(18, path.dirname(path.dirname(pg_ctl)));
      if (process.getuid?.() === 0) {
        // As root the server runs as another user, who cannot enter the folder its data would live in.
        const error = await starting.then(
          () => new Error('started'),
          (e: unknown) => e as Error,
        );
        expect(error.message).toContain(`cannot enter ${privateTmp}: run \`chmod o+x ${privateTmp}\``);
        expect(error.message).not.toContain('\n');
      } else {
        // As any other user the server runs as that user, who can use its own private folder.
        await (await starting).stop();
      }
    } finally {
      if (saved === undefined) delete process.env['RP_EMBEDDED_PG_DIR'];
      else process.env['RP_EMBEDDED_PG_DIR'] = saved;
      await rm(privateTmp, { recursive: true, force: true });
    }
  }, 120_000);
});
