// How the executor is assembled: its name, variables, module and readiness dependencies.
// main.ts runs it; tests start it in-process with sandbox overrides.
import type { SPINE_CONSUMERS } from '@rolepolicy/contracts';
import type { ServiceDefinition } from '@rolepolicy/runtime';
import { ExecutorModule } from './app.module.js';
import { executorEnvSpec } from './config.js';

/** Names of the executor's durables (a typo in the name below fails the typecheck). */
type ExecutorDurable = (typeof SPINE_CONSUMERS)['executor'][number]['durable'];

/** The durable of revocations (`rp.execute.scoped.revoke`), which runs EXECUTOR_REVOKE_CONCURRENCY slots. */
const REVOKE_DURABLE: ExecutorDurable = 'executor-scoped-revoke';

/** The executor service definition. */
export const executorService: ServiceDefinition<typeof executorEnvSpec> = {
  service: 'executor',
  envSpec: executorEnvSpec,
  module: ExecutorModule,
  // Several requests in flight per replica; the per-database mutex (execute.controller) and the advisory
  // lock keep one database's executions one after another. Revocations get slots of their own (ADR 0013):
  // expiries bunch up, and a revoke waiting for a slot is access held past its end.
  concurrency: (config) => ({
    default: config.EXECUTOR_CONCURRENCY,
    durables: { [REVOKE_DURABLE]: config.EXECUTOR_REVOKE_CONCURRENCY },
  }),
};
