// How a connection's sslMode becomes node-postgres TLS settings, and the rule on secrets: a password or token
// crosses the wire only inside TLS, unless the connection says `sslMode: disable` explicitly (ADR 0019).
import { readFileSync } from 'node:fs';
import { rootCertificates, type ConnectionOptions } from 'node:tls';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';

import { DatabaseError } from './redaction.js';

/** libpq's `sslmode` values (the spec's `connection.params.sslMode`). */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
/** One of {@link SSL_MODES}. */
export type SslMode = (typeof SSL_MODES)[number];

/** The operator's TLS settings for database connections (DATABASE_TLS_CA_FILE). */
export interface DatabaseTls {
  /** PEM certificates trusted for verify-ca/verify-full, besides Node's built-in roots. */
  readonly ca?: string | null;
}

/** The service's database TLS settings from its configuration (the CA file is read once, at start). */
export function databaseTlsFromConfig(config: {
  readonly DATABASE_TLS_CA_FILE?: string | undefined;
}): DatabaseTls {
  const file = config.DATABASE_TLS_CA_FILE;
  return file === undefined ? {} : { ca: readFileSync(file, 'utf8') };
}

/**
 * How to reach the server. `plain`: no TLS, secrets may be sent (only `disable`). `prefer`: TLS without
 * verification first; a server that does not offer TLS gets a plain connection that never sends a secret
 * (`allow`, `prefer` and the default). `tls`: TLS or nothing (`require`, `verify-ca`, `verify-full`).
 */
export type TlsPlan =
  | { readonly kind: 'plain'; readonly mode: SslMode }
  | { readonly kind: 'prefer'; readonly mode: SslMode; readonly ssl: ConnectionOptions }
  | { readonly kind: 'tls'; readonly mode: SslMode; readonly ssl: ConnectionOptions };

/** Parses an sslMode (unset: `prefer`, as libpq), naming `field` and the allowed values when unknown. */
export function sslModeOf(value: string | null | undefined, field: string): SslMode {
  if (value == null || value === '') return 'prefer';
  const mode = SSL_MODES.find((known) => known === value);
  if (mode === undefined) {
    throw new DatabaseError(`${field} must be one of ${SSL_MODES.join(', ')}`, '28000');
  }
  return mode;
}

/** The plan of `mode`; the verifying modes trust Node's roots plus the operator's CAs. */
export function tlsPlan(mode: SslMode, tls: DatabaseTls = {}): TlsPlan {
  switch (mode) {
    case 'disable':
      return { kind: 'plain', mode };
    case 'allow':
    case 'prefer':
      // libpq's `allow` tries plain text first; with no secret allowed in clear, trying TLS first is safer.
      return { kind: 'prefer', mode, ssl: { rejectUnauthorized: false } };
    case 'require':
      return { kind: 'tls', mode, ssl: { rejectUnauthorized: false } };
    case 'verify-ca':
    case 'verify-full': {
      const ca = tls.ca == null || tls.ca === '' ? {} : { ca: [...rootCertificates, tls.ca] };
      // verify-ca checks the chain only (libpq); verify-full also checks that the certificate names the host.
      const identity = mode === 'verify-ca' ? { checkServerIdentity: () => undefined } : {};
      return { kind: 'tls', mode, ssl: { rejectUnauthorized: true, ...ca, ...identity } };
    }
  }
}

/** URL parameters that name files on this service's disk or override the sslmode handling here. */
const REFUSED_URL_PARAMS = /^(ssl(?!mode$).*|uselibpqcompat|requiressl)$/i;

/**
 * A connection URL as node-postgres settings without its password and TLS parameters (those are applied
 * by {@link openConnection} under the rule above), plus the password and sslmode it carried.
 */
export function splitUrl(url: string): {
  readonly config: pg.ClientConfig;
  readonly password: string | null;
  readonly sslMode: string | null;
} {
  const parsed = new URL(url);
  let sslMode: string | null = null;
  let password = parsed.password === '' ? null : decodeURIComponent(parsed.password);
  for (const name of [...parsed.searchParams.keys()]) {
    if (REFUSED_URL_PARAMS.test(name)) {
      throw new DatabaseError(
        `connection URL parameter ${name} is not supported: TLS is set by sslmode, trusted CAs by DATABASE_TLS_CA_FILE`,
        '28000',
      );
    }
    if (name === 'sslmode') sslMode = parsed.searchParams.get(name);
    if (name === 'password') password = parsed.searchParams.get(name);
  }
  parsed.searchParams.delete('sslmode');
  parsed.searchParams.delete('password');
  parsed.password = '';
  const { password: _dropped, ssl: _none, ...config } = parseIntoClientConfig(parsed.toString());
  return { config, password, sslMode };
}

/** The password function of a plain connection that must not send a secret: refuses with the rule. */
export function refuseSecretInClear(mode: SslMode): () => Promise<string> {
  return () =>
    Promise.reject(
      new DatabaseError(
        // No host or port here: they may come from a Secret, and this message lands in status and Events.
        'the server asked for a password over a connection without TLS (it does not offer TLS); ' +
          `with sslMode ${mode} a password or token is sent only over TLS: enable TLS on the server, or set ` +
          'sslMode disable to allow sending it in clear',
        '28000',
      ),
    );
}

/** pg's error when the server answers `N` to SSLRequest (its text is fixed in pg's connection.js). */
function serverOffersNoTls(error: unknown): boolean {
  return error instanceof Error && error.message === 'The server does not support SSL connections';
}

/** The refusal of {@link refuseSecretInClear}: the server wants a secret the plain connection may not send. */
function refusedInClear(error: unknown): boolean {
  return error instanceof Error && /password over a connection without TLS/.test(error.message);
}

/** How long a server's "no TLS" answer is remembered (a server that enables TLS is asked again after it). */
export const PLAIN_SERVER_MEMO_MS = 60_000;

/**
 * Servers (host:port) that answered SSLRequest with "no TLS" within {@link PLAIN_SERVER_MEMO_MS}. On such a
 * server PostgreSQL forks a backend for the refused TLS attempt and another for the plain session: one
 * answer a minute halves the connections a fleet opens. Remembering gives nothing away: `prefer` goes plain
 * on that answer anyway, and a plain connection still refuses to send a password.
 */
export class PlainServerMemo {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = PLAIN_SERVER_MEMO_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while the server's last "no TLS" answer is fresh. */
  isPlain(server: string): boolean {
    const until = this.until.get(server);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(server);
    return false;
  }

  remember(server: string): void {
    this.until.set(server, this.now() + this.ttlMs);
  }

  forget(server: string): void {
    this.until.delete(server);
  }

  /** Forgets every server (tests that watch each connection's first bytes). */
  clear(): void {
    this.until.clear();
  }
}

/** The process's memo of servers without TLS, shared by every `prefer` pool. */
export const plainServers = new PlainServerMemo();

/**
 * The pool Kysely uses for `prefer`: a new connection tries TLS first (as libpq), and only a server that
 * offers no TLS gets a connection from the plain pool, whose password function refuses. A server that said
 * "no TLS" within the last minute is not asked again ({@link PlainServerMemo}); a refused password forgets
 * that answer, so a server that asks for one is asked for TLS again at the next connection.
 */
export function preferTlsPool(
  tls: pg.Pool,
  plain: pg.Pool,
  server: string,
  memo: PlainServerMemo = plainServers,
): PostgresPool & { idleCount: number } {
  const connectPlain = async (): Promise<PostgresPoolClient> => {
    try {
      return await plain.connect();
    } catch (error) {
      if (refusedInClear(error)) memo.forget(server);
      throw error;
    }
  };
  return {
    get idleCount() {
      return tls.idleCount + plain.idleCount;
    },
    connect: async (): Promise<PostgresPoolClient> => {
      if (tls.idleCount === 0 && plain.idleCount > 0) return plain.connect();
      if (memo.isPlain(server)) return connectPlain();
      try {
        return await tls.connect();
      } catch (error) {
        if (!serverOffersNoTls(error)) throw error;
        memo.remember(server);
        return connectPlain();
      }
    },
    end: async () => {
      await Promise.all([tls.end(), plain.end()]);
    },
  };
}
