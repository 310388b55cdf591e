// How the executor is assembled: its name, variables, module and readiness dependencies.
// main.ts runs it; tests start it in-process with sandbox overrides.
import type { ServiceDefinition } from '@rolepolicy/runtime';
import { ExecutorModule } from './app.module.js';
import { executorEnvSpec } from './config.js';

/** The executor service definition. */
export const executorService: ServiceDefinition<typeof executorEnvSpec> = {
  service: 'executor',
  envSpec: executorEnvSpec,
  module: ExecutorModule,
  // Several requests in flight per replica; the per-database mutex (execute.controller) and the advisory
  // lock keep one database's executions one after another.
  concurrency: (config) => config.EXECUTOR_CONCURRENCY,
};
