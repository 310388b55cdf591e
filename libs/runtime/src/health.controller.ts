// /healthz (the process is alive), /readyz (its dependencies answer) and /metrics (Prometheus text).
// Kubernetes probes and the demo read these; /readyz answers 503 while any dependency is down.
import { Controller, Get, Header, Inject, ServiceUnavailableException } from '@nestjs/common';
import type { BaseConfig } from './base-config.js';
import { probeAll, type DependencyCheck } from './readiness.js';
import type { ServiceMetrics } from './metrics.js';
import { DEPENDENCY_CHECKS, SERVICE_CONFIG, SERVICE_METRICS, SERVICE_NAME } from './tokens.js';

/** Body of /readyz (also sent with the 503). */
export type ReadinessBody = {
  readonly status: 'ready' | 'not_ready';
  readonly service: string;
  readonly checks: Readonly<Record<string, 'up' | 'down'>>;
};

/** Health, readiness and metrics endpoints of every service. */
@Controller()
export class HealthController {
  constructor(
    @Inject(SERVICE_NAME) private readonly service: string,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
    @Inject(SERVICE_METRICS) private readonly metrics: ServiceMetrics,
    @Inject(DEPENDENCY_CHECKS) private readonly checks: readonly DependencyCheck[],
  ) {}

  /** Liveness: answering at all is the signal. */
  @Get('healthz')
  healthz(): { readonly status: 'ok'; readonly service: string } {
    return { status: 'ok', service: this.service };
  }

  /** Readiness: 200 when every dependency answered within the timeout, else 503 with the down ones. */
  @Get('readyz')
  async readyz(): Promise<ReadinessBody> {
    const report = await probeAll(this.checks, this.config.READINESS_TIMEOUT_MS);
    const body: ReadinessBody = {
      status: report.ready ? 'ready' : 'not_ready',
      service: this.service,
      checks: report.checks,
    };
    if (!report.ready) throw new ServiceUnavailableException(body);
    return body;
  }

  /** Prometheus exposition of the service's registry. */
  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async prometheus(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
