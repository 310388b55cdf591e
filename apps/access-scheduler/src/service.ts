// How the access-scheduler is assembled: its name, variables, module and readiness dependencies.
// main.ts runs it; tests start it in-process with sandbox overrides.
import { redisCheck, type ServiceDefinition } from '@rolepolicy/runtime';
import { AccessSchedulerModule } from './app.module.js';
import { accessSchedulerEnvSpec } from './config.js';

/** The access-scheduler service definition. */
export const accessSchedulerService: ServiceDefinition<typeof accessSchedulerEnvSpec> = {
  service: 'access-scheduler',
  envSpec: accessSchedulerEnvSpec,
  module: AccessSchedulerModule,
  checks: (config) => [redisCheck(config.REDIS_URL)],
};
