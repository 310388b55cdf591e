// Variables every service reads (NATS, HTTP port for health and metrics), with per-service port defaults.
// Services spread this into their own spec and add what they need (e.g. REDIS_URL).
import { env } from './config.js';

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
    HTTP_HOST: env.text('Address the health and metrics server binds to', '0.0.0.0'),
    HTTP_PORT: env.port('Port of /healthz, /readyz and /metrics', port),
    READINESS_TIMEOUT_MS: env.positiveInt(
      'How long /readyz waits for each dependency before calling it down',
      1000,
    ),
    LOG_LEVEL: env.oneOf('Lowest log level printed', ['error', 'warn', 'log', 'debug', 'verbose'], 'log'),
  } as const;
}

/** Configuration every service has. */
export type BaseConfig = {
  readonly NATS_URL: readonly string[];
  readonly HTTP_HOST: string;
  readonly HTTP_PORT: number;
  readonly READINESS_TIMEOUT_MS: number;
  readonly LOG_LEVEL: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
};
