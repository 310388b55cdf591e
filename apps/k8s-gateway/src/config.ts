// Environment variables of the k8s-gateway, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the k8s-gateway's own variables below them.
import { baseEnvSpec, DEFAULT_HTTP_PORTS, type ConfigOf } from '@rolepolicy/runtime';
import { gatewayEnvSpec } from './gateway/gateway-config.js';

/** Every variable the k8s-gateway reads. */
export const k8sGatewayEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['k8s-gateway']),
  ...gatewayEnvSpec,
} as const;

/** The k8s-gateway's validated configuration. */
export type K8sGatewayConfig = ConfigOf<typeof k8sGatewayEnvSpec>;
