// Opens a Kysely/pg pool on a connection URL or on structured params: statement/lock timeouts set,
// `SET ROLE` run once per pooled connection, and every error redacted of credentials.

import { CompiledQuery, Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import pg from 'pg';
import { connectionRedactions, type SecretSource } from '@rolepolicy/policy';

import { authProblem, type WorkloadIdentity } from './identity/workload-identity.js';
import type { WorkloadAuth } from './identity/token-source.js';
import type { TargetAddress } from './inspect.js';
import type { PgCatalog } from './pg-catalog.tables.js';
import { DatabaseError, redactError, redactText, SafeError, type Secret } from './redaction.js';
import {
  oneStatementPerQuery,
  pinSessionSettings,
  startupOptions,
  urlWithStartupOptions,
} from './session-settings.js';
import { preferTlsPool, refuseSecretInClear, splitUrl, sslModeOf, tlsPlan, type DatabaseTls } from './tls.js';

/** The spec's pattern for `connection.params.setRole`. */
export const SET_ROLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_$-]*$/;

/** Structured connection parameters (the spec's `connection.params`, resolved to literals). */
export interface ConnectionParams {
  readonly host: string;
  readonly port?: number | null;
  readonly dbname: string;
  readonly username?: string | null;
  readonly password?: string | null;
  readonly sslMode?: string | null;
  /** Cloud workload identity instead of a password: each new connection gets a fresh provider token. */
  readonly auth?: WorkloadAuth | null;
}

/** What openConnection needs besides the spec. */
export interface OpenOptions {
  /** The service's cloud workload identity (CLOUD_IDENTITY_PROVIDER); null: `params.auth` is refused. */
  readonly identity?: WorkloadIdentity | null;
  /** CAs trusted for sslMode verify-ca/verify-full besides Node's roots (DATABASE_TLS_CA_FILE). */
  readonly tls?: DatabaseTls;
  /** Namespace of the policy this connection serves: the operator's cloud identity bounds may be per namespace. */
  readonly namespace?: string | null;
}

/** A connection URL or structured params, plus pool options. */
export type ConnectionSpec = ({ readonly url: string } | { readonly params: ConnectionParams }) & {
  /** Role to `SET ROLE` to on every pooled connection (validated against SET_ROLE_PATTERN). */
  readonly setRole?: string | null;
  /** Defaults: statement_timeout 60 s, lock_timeout 10 s, 4 connections. */
  readonly statementTimeoutMs?: number;
  readonly lockTimeoutMs?: number;
  readonly maxConnections?: number;
  readonly applicationName?: string;
  /** The parts read from a Secret: their values are redacted from every error, naming Secret and key. */
  readonly secretSources?: readonly SecretSource[] | null;
};

/** An open pool: the Kysely handle, where it points, and the secrets its errors must never show. */
export interface CatalogConnection {
  readonly db: Kysely<PgCatalog>;
  readonly target: TargetAddress;
  /** Secrets of this connection (password, URL, tokens, Secret-sourced parts); pass to redactError/redactText. */
  readonly secrets: readonly Secret[];
  close(): Promise<void>;
}

/** Parses the parts of a URL that identify the target (host, port, database); never credentials. */
export function targetOfUrl(url: string): TargetAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseError('invalid connection URL (expected postgres://host[:port]/database)', null);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseError('invalid connection URL (expected postgres://host[:port]/database)', null);
  }
  const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
  const port = parsed.port === '' ? 5432 : Number(parsed.port);
  const user = decodeURIComponent(parsed.username) || process.env['USER'] || 'postgres';
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user;
  return { host, port, database };
}

/**
 * What an error of `spec` must never show: the URL and password (as `[REDACTED]`) and each Secret-sourced
 * part (as its Secret and key). Usable before a pool exists (openConnection can refuse the spec itself).
 */
export function connectionSecrets(spec: ConnectionSpec): Secret[] {
  return [...credentialsOf(spec), ...connectionRedactions(spec, spec.secretSources ?? [])];
}

function credentialsOf(spec: ConnectionSpec): string[] {
  if ('url' in spec) {
    const secrets = [spec.url];
    try {
      const password = new URL(spec.url).password;
      if (password) secrets.push(password, decodeURIComponent(password));
    } catch {
      // An unparsable URL is itself the secret; it is already listed.
    }
    return secrets;
  }
  return spec.params.password ? [spec.params.password] : [];
}

/** Quotes an identifier for SQL (`"` doubled). */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * Opens a pool. Nothing connects until the first query; connection failures surface as DatabaseError
 * with credentials redacted.
 * @example `const conn = openConnection({ url: process.env.DATABASE_URL!, setRole: 'rolepolicy_admin' });`
 */
export function openConnection(spec: ConnectionSpec, options: OpenOptions = {}): CatalogConnection {
  // Grows by the tokens a workload identity issues to this pool (errors are redacted of them too).
  const secrets = connectionSecrets(spec);
  if (spec.setRole != null && !SET_ROLE_PATTERN.test(spec.setRole)) {
    throw new DatabaseError(`setRole must match ${SET_ROLE_PATTERN.source}`, null);
  }
  let target: TargetAddress;
  let base: pg.PoolConfig;
  // The password node-postgres sends when the server asks: a literal, or a function (tokens).
  let secret: string | (() => Promise<string>) | null;
  let token: (() => Promise<string>) | null = null;
  let sslMode: string | null | undefined;
  let sslField: string;
  if ('url' in spec) {
    target = targetOfUrl(spec.url);
    const split = splitUrl(urlWithStartupOptions(spec.url));
    base = split.config;
    secret = split.password;
    sslMode = split.sslMode;
    sslField = 'connection URL sslmode';
  } else {
    const { params } = spec;
    if (!params.host || !params.dbname)
      throw new DatabaseError('connection params need host and dbname', null);
    target = { host: params.host, port: params.port ?? 5432, database: params.dbname };
    base = {
      host: params.host,
      port: target.port,
      database: params.dbname,
      ...(params.username ? { user: params.username } : {}),
      options: startupOptions(),
    };
    secret = params.password ? params.password : null;
    sslMode = params.sslMode;
    sslField = 'connection.params.sslMode';
    if (params.auth != null) {
      token = tokenPassword(params, target.port, secrets, options);
      secret = token;
    }
  }
  const plan = tlsPlan(sslModeOf(sslMode, sslField), options.tls);
  const poolOf = (ssl: pg.PoolConfig['ssl'], password: pg.PoolConfig['password'] | null) => {
    const pool = new pg.Pool({
      ...base,
      // No password given: node-postgres falls back to PGPASSWORD (the CLI), over TLS or `disable` only.
      ...(password == null ? {} : { password }),
      ssl,
      max: spec.maxConnections ?? 4,
      statement_timeout: spec.statementTimeoutMs ?? 60_000,
      lock_timeout: spec.lockTimeoutMs ?? 10_000,
      application_name: spec.applicationName ?? 'rolepolicy',
    });
    watchErrors(pool);
    return pool;
  };
  const pool =
    plan.kind === 'prefer'
      ? preferTlsPool(
          poolOf(plan.ssl, secret),
          poolOf(false, refuseSecretInClear(plan.mode)),
          `${target.host}:${target.port}`,
        )
      : poolOf(plan.kind === 'plain' ? false : plan.ssl, secret);
  const setRole = spec.setRole ?? null;
  const db = new Kysely<PgCatalog>({
    dialect: new PostgresDialect({
      pool: token === null ? pool : warmingPool(pool, token),
      onCreateConnection: async (connection) => {
        try {
          // Before anything else runs on the session (docs/adr/0023-session-settings-the-executor-controls.md).
          await pinSessionSettings({
            run: async (text, parameters) =>
              (await connection.executeQuery(CompiledQuery.raw(text, [...parameters]))).rows as Record<
                string,
                unknown
              >[],
          });
          if (setRole === null) return;
          await connection.executeQuery(CompiledQuery.raw(`SET ROLE ${quoteIdentifier(setRole)}`));
        } catch (error) {
          throw redactError(error, secrets);
        }
      },
    }),
  });
  return { db, target, secrets, close: () => db.destroy() };
}

/**
 * A network error or a server-side termination (57P01: restart, DROP DATABASE ... FORCE) must not crash
 * the process: pg emits it on the pool for idle clients and on the client itself for a checked-out one
 * between queries. The next query on that client reports it (redacted) and the pool discards it.
 */
function watchErrors(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    oneStatementPerQuery(client);
  });
}

/**
 * Gets the token before a new connection opens its socket, so the provider's latency never runs inside the
 * server's authentication_timeout (the password function then answers from the token source's cache).
 */
function warmingPool(
  pool: PostgresPool & { readonly idleCount: number },
  token: () => Promise<string>,
): PostgresPool {
  return {
    connect: async () => {
      if (pool.idleCount === 0) await token();
      return pool.connect();
    },
    end: () => pool.end(),
  };
}

/**
 * node-postgres calls a password function for every new connection: the token source answers from its
 * cache until the refresh point, so a pool never opens a connection with an expired token.
 */
function tokenPassword(
  params: ConnectionParams,
  port: number,
  secrets: Secret[],
  options: OpenOptions,
): () => Promise<string> {
  const auth = params.auth!;
  if (params.password) {
    throw new DatabaseError('connection.params.auth and a password are mutually exclusive', '28000');
  }
  const identity = options.identity ?? null;
  const target = { host: params.host, port, username: params.username, auth };
  const context = { namespace: options.namespace ?? null, sslMode: params.sslMode };
  const problem = identity === null ? authProblem(null, target) : identity.problem(target, context);
  // 28000 invalid_authorization_specification: permanent until the policy or the deployment changes.
  if (problem !== null || identity === null)
    throw new DatabaseError(problem ?? 'no workload identity', '28000');
  const source = identity.sourceFor(target);
  const tokens: string[] = [];
  return async () => {
    const token = await source.token();
    if (!tokens.includes(token)) {
      tokens.push(token);
      secrets.push(token);
    }
    // Keep the last few tokens (the Secret-sourced parts listed before them stay).
    while (tokens.length > 4) secrets.splice(secrets.indexOf(tokens.shift()!), 1);
    return token;
  };
}

/**
 * Runs `work` and rethrows any failure as a redacted DatabaseError. Our own errors (InspectionError,
 * ExecutionError) keep their type, with message and stack redacted in place: they can quote catalog text
 * (the connected database's name) that a Secret supplied.
 */
export async function withRedaction<T>(connection: CatalogConnection, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SafeError) {
      error.message = redactText(error.message, connection.secrets);
      if (error.stack !== undefined) error.stack = redactText(error.stack, connection.secrets);
      throw error;
    }
    throw redactError(error, connection.secrets);
  }
}
