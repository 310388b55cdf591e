// A private PostgreSQL cluster with scram-sha-256 authentication on a free port, for tests that need a
// server which really refuses a wrong password (the shared local server trusts every local connection).
import { spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './nats-server.js';

/** A running private cluster; `dispose()` stops it and removes its files. */
export type PrivatePostgres = {
  readonly port: number;
  readonly password: string;
  readonly dispose: () => Promise<void>;
};

const BIN = process.env['RP_TEST_PG_BIN'] ?? '';

function run(command: string, args: readonly string[]): Promise<void> {
  // initdb refuses to run as root; as root the cluster is owned by the `postgres` OS user.
  const asRoot = userInfo().uid === 0;
  const argv = asRoot ? ['-u', 'postgres', '--', path.join(BIN, command), ...args] : [...args];
  const program = asRoot ? 'runuser' : path.join(BIN, command);
  return new Promise((resolve, reject) => {
    const child = spawn(program, argv, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code ?? 'a signal'}`)),
    );
  });
}

/** initdb + pg_ctl start with `password` for the `postgres` user, scram-sha-256 everywhere. */
export async function startPrivatePostgres(password: string): Promise<PrivatePostgres> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rp-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  await writeFile(pwfile, `${password}\n`);
  if (userInfo().uid === 0) {
    const { execFileSync } = await import('node:child_process');
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    await chown(dir, uid, gid);
    await chown(pwfile, uid, gid);
  }
  await chmod(dir, 0o700);
  const port = await freePort();
  await run('initdb', ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-N']);
  await run('pg_ctl', [
    '-D',
    data,
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    '-w',
    '-l',
    path.join(dir, 'log'),
    'start',
  ]);
  await waitForPort(port);
  return {
    port,
    password,
    dispose: async () => {
      await run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
