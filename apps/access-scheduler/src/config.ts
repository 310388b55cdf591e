// Environment variables of the access-scheduler, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the access-scheduler's own variables below them.
import { parseEphemeralDuration, privilegedNamespacesEnvVar } from '@rolepolicy/policy';
import { baseEnvSpec, DEFAULT_HTTP_PORTS, env, type ConfigOf, type EnvVar } from '@rolepolicy/runtime';

/** An ephemeral duration (`24h`, `90m`) as whole seconds. */
function duration(doc: string, defaultValue: string): EnvVar<number> {
  return {
    doc,
    default: defaultValue,
    parse: (raw) => {
      const parsed = parseEphemeralDuration(raw);
      return parsed.ok ? { ok: true, value: parsed.seconds } : { ok: false, error: parsed.message };
    },
  };
}

/** Every variable the access-scheduler reads. */
export const accessSchedulerEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['access-scheduler']),
  REDIS_URL: env.url(
    'Redis for the BullMQ approval and expiry timers',
    ['redis:', 'rediss:'],
    'redis://127.0.0.1:6379',
  ),
  ACCESS_SCHEDULER_REDIS_PREFIX: env.text('Key prefix of the BullMQ queues in Redis', 'rp-access', 64),
  EPHEMERAL_ACCESS_MAXIMUM_DURATION: duration(
    'Cluster ceiling of an EphemeralAccessPolicy maximumDuration',
    '24h',
  ),
  EPHEMERAL_ACCESS_MAX_PENDING_TTL: duration(
    'Cluster ceiling of an EphemeralAccessPolicy pendingRequestTTL',
    '1h',
  ),
  EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES: privilegedNamespacesEnvVar(),
  ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: env.positiveInt(
    'Every timer is rebuilt from resource state (and every request reconciled) this often; bounds revocation lag after a Redis or scheduler loss',
    30_000,
  ),
  ACCESS_SCHEDULER_DASHBOARD_PATH: env.text(
    'Path of the Bull Board queue dashboard on the HTTP port',
    '/queues',
    128,
  ),
  ACCESS_SCHEDULER_DASHBOARD_READ_ONLY: env.oneOf(
    'true: the dashboard shows jobs but cannot retry, promote or remove them',
    ['true', 'false'] as const,
    'true',
  ),
  NOTIFICATIONS_NAMESPACE: env.text(
    "Namespace whose rolepolicy-notifications ConfigMap is the cluster-wide notification sink (the operator's namespace)",
    'rolepolicy-system',
    63,
  ),
  NOTIFICATIONS_RETRY_ATTEMPTS: env.intInRange(
    'Attempts of one notification delivery before it is dead-lettered (the failed state in the queue dashboard)',
    1,
    30,
    10,
  ),
  NOTIFICATIONS_RETRY_BACKOFF_MS: env.positiveInt(
    'First retry delay of a notification delivery, doubling per attempt (10 attempts from 1000: 511 s in all)',
    1_000,
  ),
  NOTIFICATIONS_TIMEOUT_MS: env.positiveInt('Timeout of one notification POST', 10_000),
  NOTIFICATIONS_MAX_AGE: duration(
    'Occurrences older than this are not notified (bounds what a Redis loss re-sends); delivered ids are kept as long',
    '24h',
  ),
} as const;

/** The access-scheduler's validated configuration. */
export type AccessSchedulerConfig = ConfigOf<typeof accessSchedulerEnvSpec>;
