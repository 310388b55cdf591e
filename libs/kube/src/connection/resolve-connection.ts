// Resolves `PostgresPolicy.spec.connection` against the namespace's Secrets into what the catalog opens
// (URL or params), the digest's target reference and the Secret versions used. Pure; no value is logged.
import type { SecretSource } from '@rolepolicy/policy';
import type { Connection } from '../types.js';
import { readSecretKey, type SecretLookup } from './secret-data.js';

/** Default key of the connection URL in `connection.secretRef`. */
export const DEFAULT_URL_KEY = 'DATABASE_URL';
/** libpq `sslmode` values. */
export const SSL_MODES: readonly string[] = [
  'disable',
  'allow',
  'prefer',
  'require',
  'verify-ca',
  'verify-full',
];
/** Default PostgreSQL port when neither `port` nor `portSecret` is set. */
export const DEFAULT_PORT = 5432;

/** Structured params resolved to literals (assignable to `@rolepolicy/catalog` ConnectionParams). */
export interface ResolvedParams {
  readonly host: string;
  readonly port: number;
  readonly dbname: string;
  readonly username: string | null;
  readonly password: string | null;
  readonly sslMode: string | null;
  /** `params.auth` as written: the catalog asks the service's workload identity for a token per connection. */
  readonly auth?: WorkloadAuth | null;
}

/** The spec's `connection.params.auth` (assignable to `@rolepolicy/catalog` WorkloadAuth). */
export interface WorkloadAuth {
  readonly type: 'cloud_workload_identity';
  readonly impersonateServiceAccount: string | null;
  readonly scope: string | null;
}

/**
 * What the catalog opens (assignable to `@rolepolicy/catalog` ConnectionSpec). Holds credentials.
 * `secretSources` names every part read from a Secret (the URL, or each `<part>Secret`): the catalog and the
 * services redact those values from every message, naming the Secret and key instead (ADR 0018).
 */
export type ResolvedConnectionSpec = (
  | { readonly url: string; readonly setRole: string | null }
  | { readonly params: ResolvedParams; readonly setRole: string | null }
) & { readonly secretSources?: readonly SecretSource[] };

/** Why a connection could not be resolved. */
export type ConnectionFailureReason =
  'SecretMissing' | 'SecretKeyMissing' | 'SecretValueEmpty' | 'InvalidConnection';

/** A resolved connection, or why not (the message names Secrets and keys, never values). */
export type ConnectionResolution =
  | {
      readonly ok: true;
      readonly connection: ResolvedConnectionSpec;
      /**
       * The change digest's target reference: `namespace/secret/key` for secretRef, the canonical params
       * form (see {@link paramsTarget}) otherwise. Never credentials.
       */
      readonly target: string;
      /** Secret name -> resourceVersion of every Secret read (a change there should re-reconcile). */
      readonly secretVersions: Readonly<Record<string, string>>;
    }
  | { readonly ok: false; readonly reason: ConnectionFailureReason; readonly message: string };

type Failure = Extract<ConnectionResolution, { ok: false }>;
type Params = NonNullable<Connection['params']>;
const PARTS = ['host', 'port', 'dbname', 'username', 'password', 'sslMode'] as const;
type Part = (typeof PARTS)[number];

function invalid(message: string): Failure {
  return { ok: false, reason: 'InvalidConnection', message };
}

/** Resolves a policy's `spec.connection` in `namespace`, reading Secrets through `lookupSecret`. */
export function resolveConnection(
  namespace: string,
  connection: Connection | null | undefined,
  lookupSecret: SecretLookup,
): ConnectionResolution {
  if (connection == null) return invalid('spec.connection is missing');
  const hasRef = connection.secretRef != null;
  const hasParams = connection.params != null;
  if (hasRef && hasParams)
    return invalid('connection.secretRef and connection.params are mutually exclusive');
  if (connection.secretRef != null) {
    const name = connection.secretRef.name;
    const key = connection.secretKey ?? DEFAULT_URL_KEY;
    const read = readSecretKey(namespace, name, key, lookupSecret);
    if (!read.ok) return read;
    if (!isPostgresUrl(read.value)) {
      return invalid(`Secret ${namespace}/${name} key ${key} does not hold a postgres:// connection URL`);
    }
    return {
      ok: true,
      connection: { url: read.value, setRole: null, secretSources: [{ part: 'url', secret: name, key }] },
      target: `${namespace}/${name}/${key}`,
      secretVersions: { [name]: read.resourceVersion },
    };
  }
  if (connection.params != null) return resolveParams(namespace, connection.params, lookupSecret);
  return invalid('connection needs secretRef or params');
}

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'postgres:' || url.protocol === 'postgresql:';
  } catch {
    return false;
  }
}

function resolveParams(namespace: string, params: Params, lookupSecret: SecretLookup): ConnectionResolution {
  if (params.auth != null && (params.password != null || params.passwordSecret != null)) {
    // A token replaces the password; both would leave it unclear which one the server checks.
    return invalid('connection.params.auth and password/passwordSecret are mutually exclusive');
  }
  const values: Partial<Record<Part, string>> = {};
  const versions: Record<string, string> = {};
  const sources: SecretSource[] = [];
  for (const part of PARTS) {
    const literal = params[part];
    const ref = params[`${part}Secret`];
    if (literal != null && ref != null)
      return invalid(`connection.params.${part} and ${part}Secret are mutually exclusive`);
    if (ref != null) {
      const read = readSecretKey(namespace, ref.name, ref.key, lookupSecret);
      if (!read.ok) return read;
      values[part] = read.value;
      versions[ref.name] = read.resourceVersion;
      sources.push({ part, secret: ref.name, key: ref.key });
    } else if (literal != null) {
      values[part] = String(literal);
    }
  }
  if (values.host === undefined || values.host.trim() === '')
    return invalid('connection.params needs host or hostSecret');
  if (values.dbname === undefined || values.dbname.trim() === '') {
    return invalid('connection.params needs dbname or dbnameSecret');
  }
  if (values.sslMode !== undefined && !SSL_MODES.includes(values.sslMode)) {
    const from =
      params.sslModeSecret != null
        ? `Secret ${namespace}/${params.sslModeSecret.name} key ${params.sslModeSecret.key}`
        : 'connection.params.sslMode';
    return invalid(`${from} must be one of ${SSL_MODES.join(', ')}`);
  }
  const port = values.port === undefined ? DEFAULT_PORT : parsePort(values.port);
  if (port === null) {
    const from =
      params.portSecret != null
        ? `Secret ${namespace}/${params.portSecret.name} key ${params.portSecret.key}`
        : 'connection.params.port';
    return invalid(`${from} is not a port number (1..65535)`);
  }
  return {
    ok: true,
    connection: {
      params: {
        host: values.host,
        port,
        dbname: values.dbname,
        username: values.username ?? null,
        password: values.password ?? null,
        sslMode: values.sslMode ?? null,
        // Only present with auth: a password connection's shape (and inspect request) is unchanged.
        ...(params.auth == null ? {} : { auth: authOf(params.auth) }),
      },
      setRole: params.setRole ?? null,
      ...(sources.length === 0 ? {} : { secretSources: sources }),
    },
    target: paramsTarget(namespace, params),
    secretVersions: sortedRecord(versions),
  };
}

function authOf(auth: NonNullable<Params['auth']>): WorkloadAuth {
  return {
    type: auth.type,
    impersonateServiceAccount: auth.impersonateServiceAccount ?? null,
    scope: auth.scope ?? null,
  };
}

function parsePort(text: string): number | null {
  if (!/^\d{1,5}$/.test(text.trim())) return null;
  const port = Number(text.trim());
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * The canonical target reference of params: `namespace/params:` then `part=value` joined by `;` in the
 * order host, port, dbname, username, password, sslMode, setRole. A literal is URI-encoded, a Secret
 * reference is `secret:<name>/<key>`, a literal password is only `password=literal` (never its value),
 * and an unset port is `port=5432`. Unset parts are left out. With `auth`, `auth=<type>` then
 * `impersonateServiceAccount=` and `scope=` when set follow (who connects is part of the target).
 */
export function paramsTarget(namespace: string, params: Params): string {
  const parts: string[] = [];
  for (const part of PARTS) {
    const ref = params[`${part}Secret`];
    const literal = params[part];
    if (ref != null)
      parts.push(`${part}=secret:${encodeURIComponent(ref.name)}/${encodeURIComponent(ref.key)}`);
    else if (part === 'password' && literal != null) parts.push('password=literal');
    else if (literal != null) parts.push(`${part}=${encodeURIComponent(String(literal))}`);
    else if (part === 'port') parts.push(`port=${DEFAULT_PORT}`);
  }
  if (params.setRole != null) parts.push(`setRole=${encodeURIComponent(params.setRole)}`);
  if (params.auth != null) {
    parts.push(`auth=${params.auth.type}`);
    const { impersonateServiceAccount: as, scope } = params.auth;
    if (as != null) parts.push(`impersonateServiceAccount=${encodeURIComponent(as)}`);
    if (scope != null) parts.push(`scope=${encodeURIComponent(scope)}`);
  }
  return `${namespace}/params:${parts.join(';')}`;
}

function sortedRecord(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
