// Process entry of the k8s-gateway: validates the environment, then boots the service.
// Exits with status 1 and names the variable when the configuration is wrong.
import { runService } from '@rolepolicy/runtime';
import { k8sGatewayService } from './service.js';

await runService(k8sGatewayService);
