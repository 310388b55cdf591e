// Environment variables of the executor, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the executor's own variables below them.
import {
  baseEnvSpec,
  cloudIdentityEnvSpec,
  databaseTlsEnvSpec,
  DEFAULT_HTTP_PORTS,
  env,
  type ConfigOf,
} from '@rolepolicy/runtime';
import { privilegedNamespacesEnvVar } from '@rolepolicy/policy';

/**
 * Upper bound of EXECUTOR_CONCURRENCY and EXECUTOR_REVOKE_CONCURRENCY: each execution holds up to two database
 * connections, plus one to the server's `postgres` database while it commits role DDL (ADR 0027).
 */
export const MAX_EXECUTOR_CONCURRENCY = 32;

/** Every variable the executor reads. */
export const executorEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['executor']),
  ...cloudIdentityEnvSpec(),
  ...databaseTlsEnvSpec(),
  EXECUTOR_CONCURRENCY: env.intInRange(
    'Execution requests one replica handles at once per durable (policy executions, ephemeral activations; ' +
      'each holds up to two database connections); requests for one database still run one after another',
    1,
    MAX_EXECUTOR_CONCURRENCY,
    4,
  ),
  EXECUTOR_SERVER_CONCURRENCY: env.intInRange(
    'Policy executions and ephemeral activations one replica runs at once on one PostgreSQL server ' +
      '(host:port), across all its databases; the others wait in the replica without a connection. Each holds ' +
      "up to three sessions (two on its database, one on the server's `postgres` for the role lock): keep " +
      "replicas x (3 x this + 2 x EXECUTOR_SERVER_REVOKE_CONCURRENCY) below the server's max_connections, with " +
      'room for the inspector and others',
    1,
    MAX_EXECUTOR_CONCURRENCY,
    4,
  ),
  EXECUTOR_SERVER_REVOKE_CONCURRENCY: env.intInRange(
    'Revocations and sweeps of ephemeral access one replica runs at once on one PostgreSQL server, in slots ' +
      'of their own apart from EXECUTOR_SERVER_CONCURRENCY, so a revocation never waits for a policy execution ' +
      'or an activation to give one back (ADR 0013); a revocation goes ahead of waiting sweeps. Each holds two ' +
      'sessions (its database, the role lock). Default 8, as EXECUTOR_REVOKE_CONCURRENCY: 1,000 expiries a ' +
      'minute over the databases of one server keep about 6 revocations in flight',
    1,
    MAX_EXECUTOR_CONCURRENCY,
    8,
  ),
  EXECUTOR_REVOKE_CONCURRENCY: env.intInRange(
    'Revocations (executor-scoped-revoke) one replica runs at once, in slots of their own besides ' +
      'EXECUTOR_CONCURRENCY; revocations of one database still run one after another',
    1,
    MAX_EXECUTOR_CONCURRENCY,
    8,
  ),
  EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES: privilegedNamespacesEnvVar(),
} as const;

/** The executor's validated configuration. */
export type ExecutorConfig = ConfigOf<typeof executorEnvSpec>;
