// Root module of the k8s-gateway: the only process that talks to the Kubernetes API.
// Feature modules (consumers with @EventPattern handlers, services) are added to `imports`.
import { Module } from '@nestjs/common';
import { GatewayModule } from './gateway/gateway.module.js';

/** The k8s-gateway's own module; the shared runtime (NATS, health, metrics) is imported around it. */
@Module({
  imports: [GatewayModule.forRoot()],
})
export class K8sGatewayModule {}
