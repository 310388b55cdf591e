// Readiness probe of the Kubernetes API for /readyz: the gateway can do nothing while the API server
// does not answer. Errors name no server URL (kubeconfigs may embed credentials in it).
import { VersionApi } from '@kubernetes/client-node';
import type { DependencyCheck } from '@rolepolicy/runtime';
import type { GatewayConfig } from './gateway-config.js';
import { kubeConfigFrom } from './gateway.js';

/** `kubernetes` is up when `GET /version` answers. */
export function kubernetesCheck(config: Pick<GatewayConfig, 'KUBECONFIG'>): DependencyCheck {
  const api = kubeConfigFrom(config).makeApiClient(VersionApi);
  return {
    name: 'kubernetes',
    probe: async () => {
      try {
        await api.getCode();
      } catch {
        throw new Error('the Kubernetes API did not answer GET /version');
      }
    },
  };
}
