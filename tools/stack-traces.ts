// `STACK_TRACES` of `npm run stack` (docs/tracing.md): the services export their traces (OTLP/HTTP JSON) to a
// receiver in the stack's own process, which prints one line per span (`console`) or appends each export
// request as one JSON line to a file (any other value: the file's path), so a person can read a trace
// without running a collector. With OTEL_* variables of your own (a collector), leave STACK_TRACES unset.
import path from 'node:path';
import { OtlpReceiver, type ReceivedSpan } from '@rolepolicy/testing';

/** One readable line per span: trace, service, span name, what it is about, duration. */
function spanLine(s: ReceivedSpan): string {
  const a = s.attributes;
  const about = [
    a['rolepolicy.kind'],
    a['rolepolicy.namespace'],
    a['rolepolicy.name'],
    a['rolepolicy.outcome'],
  ]
    .filter((v) => v !== undefined)
    .join(' ');
  const ms = Number(s.endNs - s.startNs) / 1e6;
  const service = String(a['rolepolicy.service'] ?? s.serviceName);
  return `[trace ${s.traceId.slice(0, 8)}] ${service.padEnd(16)} ${s.name} ${about} (${ms.toFixed(1)} ms)`;
}

/**
 * Starts the receiver STACK_TRACES asks for and points the services' OTEL_* variables at it (they inherit
 * this process's environment). Undefined when STACK_TRACES is unset.
 */
export async function startTraceSink(
  setting: string | undefined,
): Promise<{ readonly describe: string; stop(): Promise<void> } | undefined> {
  if (setting === undefined || setting.trim() === '') return undefined;
  const toConsole = setting.trim() === 'console';
  const file = toConsole ? undefined : path.resolve(setting.trim());
  const receiver = await OtlpReceiver.start({
    retain: false,
    ...(file === undefined ? {} : { file }),
    ...(toConsole
      ? {
          onSpans: (spans: readonly ReceivedSpan[]) => {
            for (const s of spans) console.log(spanLine(s));
          },
        }
      : {}),
  });
  Object.assign(process.env, receiver.env({ logs: true }), { OTEL_BSP_SCHEDULE_DELAY: '500' });
  return {
    describe: toConsole
      ? `traces: printed here, one line per span (OTLP receiver ${receiver.endpoint})`
      : `traces: appended to ${file} as OTLP JSON, one export request per line (receiver ${receiver.endpoint})`,
    stop: () => receiver.stop(),
  };
}
