// When the services start the OpenTelemetry SDK: only when an OTEL_* variable names an exporter or an OTLP
// endpoint, never when OTEL_SDK_DISABLED=true; without any, nothing is loaded (docs/tracing.md).
import { startTelemetry, telemetryRequested } from './telemetry.js';

test.each([
  [{}, false],
  [{ OTEL_SERVICE_NAME: 'planner' }, false],
  [{ OTEL_TRACES_EXPORTER: 'none' }, false],
  [{ OTEL_TRACES_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' }, false],
  [{ OTEL_TRACES_EXPORTER: '' }, false],
  [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
  [{ OTEL_TRACES_EXPORTER: 'console' }, true],
  [{ OTEL_LOGS_EXPORTER: 'otlp' }, true],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
  [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
  [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, false],
  [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' }, true],
])('%j asks for telemetry: %s', (env, expected) => {
  expect(telemetryRequested(env)).toBe(expected);
});

test('without OTEL_* variables no SDK is started', async () => {
  await expect(startTelemetry('planner', {})).resolves.toBeUndefined();
});
