// Variables every service reads (NATS, HTTP port for health and metrics), with per-service port defaults.
// Services spread this into their own spec and add what they need (e.g. REDIS_URL).
import { env, type ConfigProblem } from './config.js';

/** Default HTTP port of each service, so the five can run side by side on one machine. */
export const DEFAULT_HTTP_PORTS = {
  'k8s-gateway': 8081,
  inspector: 8082,
  planner: 8083,
  executor: 8084,
  'access-scheduler': 8085,
} as const;

/** Variables shared by all services; `port` is the service's default HTTP port. */
export function baseEnvSpec(port: number) {
  return {
    NATS_URL: env.urls(
      'NATS server URL(s), comma-separated; JetStream must be enabled',
      ['nats:', 'tls:'],
      'nats://127.0.0.1:4222',
    ),
    NATS_CREDS_FILE: env.optionalFile(
      'NATS credentials file (user JWT and nkey seed); excludes the other NATS credentials',
    ),
    NATS_USER: env.optionalText('NATS user name (with NATS_PASSWORD)'),
    NATS_PASSWORD: env.optionalText('NATS password (with NATS_USER)', 1024),
    NATS_NKEY_SEED_FILE: env.optionalFile(
      'File holding the NATS nkey seed (`SU...`) the service signs in with',
    ),
    NATS_TLS_CA_FILE: env.optionalFile(
      'CA certificate(s) that sign the NATS server certificate; turns TLS on',
    ),
    NATS_TLS_CERT_FILE: env.optionalFile(
      'Client certificate for NATS TLS (with NATS_TLS_KEY_FILE); turns TLS on',
    ),
    NATS_TLS_KEY_FILE: env.optionalFile('Private key of NATS_TLS_CERT_FILE'),
    HTTP_HOST: env.text('Address the health and metrics server binds to', '0.0.0.0'),
    HTTP_PORT: env.port('Port of /healthz, /readyz and /metrics', port),
    READINESS_TIMEOUT_MS: env.positiveInt(
      'How long /readyz waits for each dependency before calling it down',
      1000,
    ),
    LOG_LEVEL: env.oneOf('Lowest log level printed', ['error', 'warn', 'log', 'debug', 'verbose'], 'log'),
    LOG_FORMAT: env.oneOf(
      'Log lines: one JSON object each, or readable for a terminal',
      ['json', 'pretty'],
      'json',
    ),
    AUDIT_LOG_FILE: env.optionalText(
      'File the audit records are appended to (JSON lines) instead of stdout; empty writes them to stdout',
      4096,
    ),
  } as const;
}

/**
 * TLS of the database connections the inspector and the executor open (`connection.params.sslMode`,
 * a URL's `sslmode`); the default is to try TLS first and never send a secret in clear (ADR 0019).
 */
export function databaseTlsEnvSpec() {
  return {
    DATABASE_TLS_CA_FILE: env.optionalFile(
      'CA certificate(s) (PEM) trusted for sslMode verify-ca and verify-full, besides Node’s built-in roots',
    ),
  } as const;
}

/**
 * Cloud workload identity (`connection.params.auth`), read by the services that open database connections
 * (inspector, executor). The SDKs read their own variables too (docs/cloud-identity.md).
 */
export function cloudIdentityEnvSpec() {
  return {
    CLOUD_IDENTITY_PROVIDER: env.oneOf(
      'Provider of short-lived database tokens for connections with params.auth (none refuses them)',
      ['none', 'aws', 'gcp', 'azure'],
      'none',
    ),
    CLOUD_IDENTITY_AWS_REGION: env.optionalText(
      'AWS region the RDS tokens are signed for (unset: AWS_REGION or the SDK profile)',
      64,
    ),
    CLOUD_IDENTITY_GCP_IAM_ENDPOINT: env.optionalText(
      'IAM Credentials API base URL for impersonateServiceAccount (unset: https://iamcredentials.googleapis.com)',
      512,
    ),
    CLOUD_IDENTITY_ALLOWED_HOSTS: env.optionalText(
      'Hosts a cloud token may be sent to, comma-separated: `host` or `*.suffix`, each optionally `namespace/` ' +
        'first to allow it for that namespace only; required when CLOUD_IDENTITY_PROVIDER is set',
      8192,
    ),
    CLOUD_IDENTITY_ALLOWED_SERVICE_ACCOUNTS: env.optionalText(
      'Service accounts params.auth.impersonateServiceAccount may name (gcp), comma-separated, each optionally ' +
        '`namespace/` first (unset: no impersonation)',
      8192,
    ),
    CLOUD_IDENTITY_ALLOWED_SCOPES: env.optionalText(
      'Token scopes params.auth.scope may ask for besides the provider’s database-login scope, comma-separated ' +
        '(unset: the login scope only)',
      8192,
    ),
  } as const;
}

/** Configuration every service has. */
export type BaseConfig = {
  readonly NATS_URL: readonly string[];
  readonly NATS_CREDS_FILE: string | undefined;
  readonly NATS_USER: string | undefined;
  readonly NATS_PASSWORD: string | undefined;
  readonly NATS_NKEY_SEED_FILE: string | undefined;
  readonly NATS_TLS_CA_FILE: string | undefined;
  readonly NATS_TLS_CERT_FILE: string | undefined;
  readonly NATS_TLS_KEY_FILE: string | undefined;
  readonly HTTP_HOST: string;
  readonly HTTP_PORT: number;
  readonly READINESS_TIMEOUT_MS: number;
  readonly LOG_LEVEL: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
  readonly LOG_FORMAT: 'json' | 'pretty';
  readonly AUDIT_LOG_FILE: string | undefined;
};

/**
 * Rules across the NATS variables that one variable alone cannot state: one way to sign in, user and
 * password together, certificate and key together. Names variables, never values.
 */
export function natsConfigProblems(config: BaseConfig): readonly ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const ways = [
    config.NATS_CREDS_FILE !== undefined && 'NATS_CREDS_FILE',
    (config.NATS_USER !== undefined || config.NATS_PASSWORD !== undefined) && 'NATS_USER/NATS_PASSWORD',
    config.NATS_NKEY_SEED_FILE !== undefined && 'NATS_NKEY_SEED_FILE',
  ].filter((w): w is string => w !== false);
  if (ways.length > 1) {
    problems.push({ name: 'NATS_CREDS_FILE', problem: `conflicts: set only one of ${ways.join(', ')}` });
  }
  if (config.NATS_USER !== undefined && config.NATS_PASSWORD === undefined) {
    problems.push({ name: 'NATS_PASSWORD', problem: 'is required when NATS_USER is set' });
  }
  if (config.NATS_PASSWORD !== undefined && config.NATS_USER === undefined) {
    problems.push({ name: 'NATS_USER', problem: 'is required when NATS_PASSWORD is set' });
  }
  if (config.NATS_TLS_CERT_FILE !== undefined && config.NATS_TLS_KEY_FILE === undefined) {
    problems.push({ name: 'NATS_TLS_KEY_FILE', problem: 'is required when NATS_TLS_CERT_FILE is set' });
  }
  if (config.NATS_TLS_KEY_FILE !== undefined && config.NATS_TLS_CERT_FILE === undefined) {
    problems.push({ name: 'NATS_TLS_CERT_FILE', problem: 'is required when NATS_TLS_KEY_FILE is set' });
  }
  return problems;
}
