// OpenTelemetry for the services (issue 30, docs/tracing.md): the Node SDK, configured by the standard
// OTEL_* variables, started before Nest when any of them asks for an exporter, shut down (flushing what is
// buffered) when the service closes. Off by default: without those variables the SDK is never even
// loaded (dynamic import), no propagator is registered and the spans of libs/contracts are not made.
// Services that share one process (tests, tools) share one SDK, counted: the last one to close shuts it down.
import { context, propagation, trace } from '@opentelemetry/api';
import { logs } from '@opentelemetry/api-logs';
import { setTracingActive } from '@rolepolicy/contracts';

/** What a started service holds: release it when the service closes. */
export type TelemetryHandle = {
  /** Ends this service's use; the last user flushes and shuts the SDK down. */
  release(): Promise<void>;
};

type Env = Readonly<Record<string, string | undefined>>;

/** An OTEL_*_EXPORTER list as the SDK reads it: comma-separated, trimmed, `none` meaning none. */
function exporters(env: Env, name: string): readonly string[] | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Whether the environment asks for telemetry: an exporter named in `OTEL_TRACES_EXPORTER` or
 * `OTEL_LOGS_EXPORTER` (other than `none`), or an OTLP endpoint; and `OTEL_SDK_DISABLED` not `true`.
 */
export function telemetryRequested(env: Env): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const traces = exporters(env, 'OTEL_TRACES_EXPORTER');
  const logExporters = exporters(env, 'OTEL_LOGS_EXPORTER');
  const named = [...(traces ?? []), ...(logExporters ?? [])].some((e) => e !== 'none');
  const endpoint = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'].some(
    (name) => (env[name]?.trim() ?? '') !== '',
  );
  return named || endpoint;
}

/** Whether spans are exported once the SDK runs (OTEL_TRACES_EXPORTER unset means the SDK's default, otlp). */
function tracesWanted(env: Env): boolean {
  const traces = exporters(env, 'OTEL_TRACES_EXPORTER');
  return traces === undefined || !traces.includes('none');
}

type Running = { users: number; readonly sdk: Promise<{ shutdown(): Promise<void> }> };
let running: Running | undefined;

/**
 * Starts the SDK for `service` when the process environment asks for it (the SDK itself reads
 * `process.env`), or joins the one already running in this process.
 * @returns undefined when telemetry is off
 */
export async function startTelemetry(
  service: string,
  env: Env = process.env,
): Promise<TelemetryHandle | undefined> {
  if (!telemetryRequested(env)) return undefined;
  if (running === undefined) running = { users: 0, sdk: createSdk(service, env) };
  const current = running;
  current.users += 1;
  try {
    await current.sdk;
  } catch (error) {
    current.users -= 1;
    if (running === current) running = undefined;
    throw error;
  }
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      current.users -= 1;
      if (current.users > 0 || running !== current) return;
      running = undefined;
      await stop(await current.sdk);
    },
  };
}

async function createSdk(service: string, env: Env): Promise<{ shutdown(): Promise<void> }> {
  // Loaded here, only when asked for: a service without OTEL_* variables never loads the SDK.
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { envDetector, hostDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
  const named = (env['OTEL_SERVICE_NAME']?.trim() ?? '') !== '';
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over these defaults.
    resource: resourceFromAttributes({ 'service.namespace': 'rolepolicy' }),
    ...(named ? {} : { serviceName: `rolepolicy-${service}` }),
    // No process detector: a command line is not something a trace needs to carry.
    resourceDetectors: [envDetector, hostDetector],
    // Metrics stay on Prometheus /metrics; the OTLP metrics exporter is not started.
    metricReaders: [],
    // Log records (the audit trail's) are exported only when OTEL_LOGS_EXPORTER says so.
    ...(exporters(env, 'OTEL_LOGS_EXPORTER') === undefined ? { logRecordProcessors: [] } : {}),
    instrumentations: [],
  });
  sdk.start();
  setTracingActive(tracesWanted(env));
  return sdk;
}

async function stop(sdk: { shutdown(): Promise<void> }): Promise<void> {
  setTracingActive(false);
  try {
    await sdk.shutdown();
  } finally {
    // Unregistered, so a service started later in this process can register a fresh SDK.
    trace.disable();
    propagation.disable();
    context.disable();
    logs.disable();
  }
}
