// How the k8s-gateway is assembled: its name, variables, module and readiness dependencies.
// main.ts runs it; tests start it in-process with sandbox overrides.
import type { ServiceDefinition } from '@rolepolicy/runtime';
import { K8sGatewayModule } from './app.module.js';
import { k8sGatewayEnvSpec } from './config.js';
import { kubernetesCheck } from './gateway/kubernetes-check.js';

/** The k8s-gateway service definition. */
export const k8sGatewayService: ServiceDefinition<typeof k8sGatewayEnvSpec> = {
  service: 'k8s-gateway',
  envSpec: k8sGatewayEnvSpec,
  module: K8sGatewayModule,
  checks: (config) => [kubernetesCheck(config)],
};
