// Environment variables of the executor, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the executor's own variables below them.
import { baseEnvSpec, DEFAULT_HTTP_PORTS, type ConfigOf } from '@rolepolicy/runtime';

/** Every variable the executor reads. */
export const executorEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['executor']),
} as const;

/** The executor's validated configuration. */
export type ExecutorConfig = ConfigOf<typeof executorEnvSpec>;
