// Environment variables of the access-scheduler, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the access-scheduler's own variables below them.
import { baseEnvSpec, DEFAULT_HTTP_PORTS, env, type ConfigOf } from '@rolepolicy/runtime';

/** Every variable the access-scheduler reads. */
export const accessSchedulerEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['access-scheduler']),
  REDIS_URL: env.url(
    'Redis for the BullMQ approval and expiry timers',
    ['redis:', 'rediss:'],
    'redis://127.0.0.1:6379',
  ),
} as const;

/** The access-scheduler's validated configuration. */
export type AccessSchedulerConfig = ConfigOf<typeof accessSchedulerEnvSpec>;
