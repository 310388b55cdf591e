// A private PostgreSQL cluster with password authentication on a free port, for tests that need a server
// which really refuses a wrong password (the shared local server trusts every local connection), with TLS.
import { spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './nats-server.js';

/** A running private cluster; `dispose()` stops it and removes its files. */
export type PrivatePostgres = {
  readonly port: number;
  readonly password: string;
  /** PEM of the CA that signed the server certificate (`certificateNames`); null without TLS. */
  readonly caPem: string | null;
  readonly dispose: () => Promise<void>;
};

/** How the private cluster authenticates and whether it offers TLS. */
export type PrivatePostgresOptions = {
  /** pg_hba method for every connection; `password` asks for the password in clear. Default scram-sha-256. */
  readonly auth?: 'scram-sha-256' | 'md5' | 'password';
  /** Offer TLS with a fresh CA and server certificate. Default off (the server answers `N` to SSLRequest). */
  readonly tls?: boolean;
  /** subjectAltName entries of the server certificate. Default `['DNS:localhost']` (not 127.0.0.1). */
  readonly certificateNames?: readonly string[];
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

function openssl(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`openssl exited with ${code ?? 'a signal'}`)),
    );
  });
}

/** A one-day CA and a server certificate it signs for `names` (subjectAltName entries), in `dir`. */
async function makeCertificates(
  dir: string,
  names: readonly string[],
): Promise<{ cert: string; key: string; caPem: string }> {
  const file = (name: string) => path.join(dir, name);
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=rp-test-ca',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
  ]);
  await openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  ]);
  await writeFile(file('ext'), `subjectAltName=${names.join(',')}\n`);
  await openssl([
    'x509',
    '-req',
    '-days',
    '1',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-extfile',
    file('ext'),
    '-out',
    file('server.crt'),
  ]);
  await chmod(file('server.key'), 0o600);
  return { cert: file('server.crt'), key: file('server.key'), caPem: await readFile(file('ca.crt'), 'utf8') };
}

/** initdb + pg_ctl start with `password` for the `postgres` user, `options.auth` everywhere. */
export async function startPrivatePostgres(
  password: string,
  options: PrivatePostgresOptions = {},
): Promise<PrivatePostgres> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rp-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  await writeFile(pwfile, `${password}\n`);
  const tls =
    options.tls === true ? await makeCertificates(dir, options.certificateNames ?? ['DNS:localhost']) : null;
  if (userInfo().uid === 0) {
    const { execFileSync } = await import('node:child_process');
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    await chown(dir, uid, gid);
    await chown(pwfile, uid, gid);
    if (tls !== null) await chown(tls.key, uid, gid);
  }
  await chmod(dir, 0o700);
  const port = await freePort();
  await run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    `--auth=${options.auth ?? 'scram-sha-256'}`,
    `--pwfile=${pwfile}`,
    '-N',
  ]);
  await run('pg_ctl', [
    '-D',
    data,
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off` +
      (tls === null ? '' : ` -c ssl=on -c ssl_cert_file=${tls.cert} -c ssl_key_file=${tls.key}`),
    '-w',
    '-l',
    path.join(dir, 'log'),
    'start',
  ]);
  await waitForPort(port);
  return {
    port,
    password,
    caPem: tls?.caPem ?? null,
    dispose: async () => {
      await run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
