// How the planner is assembled: its name, variables, module and readiness dependencies.
// main.ts runs it; tests start it in-process with sandbox overrides.
import type { ServiceDefinition } from '@rolepolicy/runtime';
import { PlannerModule } from './app.module.js';
import { plannerEnvSpec } from './config.js';

/** The planner service definition. */
export const plannerService: ServiceDefinition<typeof plannerEnvSpec> = {
  service: 'planner',
  envSpec: plannerEnvSpec,
  module: PlannerModule,
};
