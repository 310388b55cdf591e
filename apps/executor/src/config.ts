// Environment variables of the executor, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the executor's own variables below them.
import {
  baseEnvSpec,
  cloudIdentityEnvSpec,
  DEFAULT_HTTP_PORTS,
  env,
  type ConfigOf,
} from '@rolepolicy/runtime';

/** Upper bound of EXECUTOR_CONCURRENCY: each execution holds up to two database connections. */
export const MAX_EXECUTOR_CONCURRENCY = 32;

/** Every variable the executor reads. */
export const executorEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['executor']),
  ...cloudIdentityEnvSpec(),
  EXECUTOR_CONCURRENCY: env.intInRange(
    'Execution requests one replica handles at once (each holds up to two database connections); ' +
      'requests for one database still run one after another',
    1,
    MAX_EXECUTOR_CONCURRENCY,
    4,
  ),
} as const;

/** The executor's validated configuration. */
export type ExecutorConfig = ConfigOf<typeof executorEnvSpec>;
