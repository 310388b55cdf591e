// TLS by default against real servers: a private PostgreSQL that asks for the password in clear (pg_hba
// `password`), with and without TLS, behind a proxy that records every byte the client sent. Proves: the
// default sslMode tries TLS first, a password never crosses a plain connection unless sslMode says disable,
// and the verifying modes check the certificate. The shared trust-auth server (ssl off) still works.
import {
  createPostgresSandbox,
  startPrivatePostgres,
  startTcpProxy,
  type PostgresSandbox,
  type PrivatePostgres,
  type TcpProxy,
} from '@rolepolicy/testing';
import { sql } from 'kysely';

import {
  openConnection,
  withRedaction,
  type ConnectionParams,
  type ConnectionSpec,
  type OpenOptions,
} from './connection.js';
import { DatabaseError } from './redaction.js';
import { plainServers } from './tls.js';

const PASSWORD = 'Clear-Text-Pa55-never-on-the-wire';

let plain: PrivatePostgres;
let secure: PrivatePostgres;
let plainProxy: TcpProxy;
let secureProxy: TcpProxy;
let shared: PostgresSandbox;

beforeAll(async () => {
  [plain, secure, shared] = await Promise.all([
    startPrivatePostgres(PASSWORD, { auth: 'password' }),
    startPrivatePostgres(PASSWORD, { auth: 'password', tls: true }),
    createPostgresSandbox('tls'),
  ]);
  plainProxy = await startTcpProxy(plain.port);
  secureProxy = await startTcpProxy(secure.port);
}, 120_000);

afterAll(async () => {
  await plainProxy?.dispose();
  await secureProxy?.dispose();
  await Promise.all([plain?.dispose(), secure?.dispose(), shared?.drop()]);
}, 60_000);

/** Connects, reports whether the session is encrypted, and closes; rejects with the redacted error. */
async function sessionIsEncrypted(spec: ConnectionSpec, options: OpenOptions = {}): Promise<boolean> {
  const connection = openConnection({ ...spec, maxConnections: 1 }, options);
  try {
    return await withRedaction(connection, async () => {
      const { rows } = await sql<{ ssl: boolean }>`
        select ssl from pg_catalog.pg_stat_ssl where pid = pg_catalog.pg_backend_pid()`.execute(
        connection.db,
      );
      return rows[0]!.ssl;
    });
  } finally {
    await connection.close();
  }
}

const paramsAt = (port: number, sslMode?: string): ConnectionSpec => ({
  params: {
    host: '127.0.0.1',
    port,
    dbname: 'postgres',
    username: 'postgres',
    password: PASSWORD,
    ...(sslMode === undefined ? {} : { sslMode }),
  },
});
const trusted = (): OpenOptions => ({ tls: { ca: secure.caPem! } });
const urlAt = (port: number, query = ''): ConnectionSpec => ({
  url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres${query}`,
});

describe('a server without TLS that asks for the password in clear', () => {
  const defaults: readonly [string, ConnectionSpec][] = [
    ['params without sslMode', paramsAt(0)],
    ['params with sslMode prefer', paramsAt(0, 'prefer')],
    ['params with sslMode allow', paramsAt(0, 'allow')],
    ['a URL without sslmode', urlAt(0)],
    ['a URL with sslmode=prefer', urlAt(0, '?sslmode=prefer')],
  ];
  it.each(defaults)('%s: gets no password, and the error names sslMode and the rule', async (_l, spec) => {
    const port = plainProxy.port;
    const aimed: ConnectionSpec =
      'url' in spec ? { url: spec.url.replace(':0/', `:${port}/`) } : { params: { ...spec.params, port } };
    const before = plainProxy.sent().length;

    const error = await sessionIsEncrypted(aimed).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).message).toMatch(
      /asked for a password over a connection without TLS.*sslMode.*disable/,
    );
    expect((error as DatabaseError).code).toBe('28000');
    // Host and port may come from a Secret: the refusal (status, Events) quotes neither.
    expect((error as DatabaseError).message).not.toMatch(new RegExp(`127\\.0\\.0\\.1|${port}`));
    // The client tried TLS first (SSLRequest: length 8, code 80877103) and never sent the password.
    const sent = plainProxy.sent().subarray(before);
    expect(sent.subarray(0, 8)).toEqual(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]));
    expect(sent.includes(Buffer.from(PASSWORD))).toBe(false);
  });

  it('sends it in clear only when the connection says sslMode disable', async () => {
    const before = plainProxy.sent().length;
    expect(await sessionIsEncrypted(paramsAt(plainProxy.port, 'disable'))).toBe(false);
    expect(plainProxy.sent().subarray(before).includes(Buffer.from(PASSWORD))).toBe(true);
    expect(await sessionIsEncrypted(urlAt(plainProxy.port, '?sslmode=disable'))).toBe(false);
  });

  it('refuses require and the verifying modes instead of falling back to plain text', async () => {
    for (const mode of ['require', 'verify-ca', 'verify-full']) {
      const error = await sessionIsEncrypted(paramsAt(plainProxy.port, mode)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseError);
      expect((error as Error).message).toContain('does not support SSL');
    }
  });
});

describe('a server with TLS (certificate from a private CA)', () => {
  it('the default sslMode connects over TLS and the password crosses only encrypted', async () => {
    const before = secureProxy.sent().length;
    expect(await sessionIsEncrypted(paramsAt(secureProxy.port))).toBe(true);
    expect(await sessionIsEncrypted(urlAt(secureProxy.port))).toBe(true);
    expect(secureProxy.sent().subarray(before).includes(Buffer.from(PASSWORD))).toBe(false);
  });

  it('require encrypts without checking the certificate', async () => {
    expect(await sessionIsEncrypted(paramsAt(secure.port, 'require'))).toBe(true);
  });

  it('verify-ca checks the certificate chain against the trusted CAs', async () => {
    const error = await sessionIsEncrypted(paramsAt(secure.port, 'verify-ca')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as Error).message).toMatch(/certificate/);
    expect(await sessionIsEncrypted(paramsAt(secure.port, 'verify-ca'), trusted())).toBe(true);
  });

  it('verify-full also checks that the certificate names the host', async () => {
    // The certificate names localhost only: 127.0.0.1 reaches the same server under a name it lacks.
    const byName = paramsAt(secure.port, 'verify-full') as { params: ConnectionParams };
    const localhost: ConnectionSpec = { params: { ...byName.params, host: 'localhost' } };
    expect(await sessionIsEncrypted(localhost, trusted())).toBe(true);
    const error = await sessionIsEncrypted(byName, trusted()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as Error).message).toMatch(/127\.0\.0\.1/);
    const untrusted = await sessionIsEncrypted(localhost).catch((e: unknown) => e);
    expect((untrusted as Error).message).toMatch(/certificate/);
  });
});

describe('the shared trust-auth server', () => {
  it('the default sslMode still connects when the server offers no TLS and asks for nothing', async () => {
    expect(await sessionIsEncrypted({ url: shared.url })).toBe(false);
  });
});

describe('a server without TLS that asks for no password (trust)', () => {
  /** SSLRequest packets (length 8, code 80877103) among the bytes the client sent. */
  const sslRequests = (sent: Buffer): number => {
    const request = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);
    let count = 0;
    for (let at = sent.indexOf(request); at !== -1; at = sent.indexOf(request, at + 1)) count++;
    return count;
  };

  it('is asked for TLS once a minute, not at every connection (each refused attempt costs a backend)', async () => {
    const server = new URL(shared.url);
    const proxy = await startTcpProxy(Number(server.port || 5432));
    const spec: ConnectionSpec = {
      params: { host: '127.0.0.1', port: proxy.port, dbname: shared.database, username: server.username },
    };
    try {
      plainServers.clear();
      expect(await sessionIsEncrypted(spec)).toBe(false);
      expect(await sessionIsEncrypted(spec)).toBe(false);
      expect(sslRequests(proxy.sent())).toBe(1);
      // Once the answer is forgotten (a minute on), TLS is asked for first again.
      plainServers.clear();
      expect(await sessionIsEncrypted(spec)).toBe(false);
      expect(sslRequests(proxy.sent())).toBe(2);
    } finally {
      plainServers.clear();
      await proxy.dispose();
    }
  });
});
