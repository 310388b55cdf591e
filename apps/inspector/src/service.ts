// How the inspector is assembled: its name, variables, module and readiness dependencies.
// main.ts runs it; tests start it in-process with sandbox overrides.
import type { ServiceDefinition } from '@rolepolicy/runtime';
import { InspectorModule } from './app.module.js';
import { inspectorEnvSpec } from './config.js';

/** The inspector service definition. */
export const inspectorService: ServiceDefinition<typeof inspectorEnvSpec> = {
  service: 'inspector',
  envSpec: inspectorEnvSpec,
  module: InspectorModule,
};
