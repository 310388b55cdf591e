// Reading traces the stack sent to an in-process OTLP receiver (e2e/tracing.int-spec.ts).
import type { OtlpReceiver, ReceivedSpan } from '@rolepolicy/testing';
import { waitFor } from './wait.js';

/** One line per span of a trace, indented under its parent, for a failing test's message. */
export function describeTrace(spans: readonly ReceivedSpan[]): string {
  const byParent = new Map<string | undefined, ReceivedSpan[]>();
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) {
    const parent = s.parentSpanId !== undefined && ids.has(s.parentSpanId) ? s.parentSpanId : undefined;
    byParent.set(parent, [...(byParent.get(parent) ?? []), s]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number): void => {
    for (const s of byParent.get(parent) ?? []) {
      const a = s.attributes;
      const what = [
        a['rolepolicy.kind'],
        a['rolepolicy.namespace'],
        a['rolepolicy.name'],
        a['rolepolicy.outcome'],
        a['rolepolicy.scoped_operation'],
      ]
        .filter((v) => v !== undefined)
        .join(' ');
      lines.push(`${'  '.repeat(depth)}${s.name} [${String(a['rolepolicy.service'])}] ${what}`);
      walk(s.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

/** The ids of every trace holding a span that `match` accepts. */
export function tracesWith(receiver: OtlpReceiver, match: (s: ReceivedSpan) => boolean): string[] {
  return [...new Set(receiver.spans.filter(match).map((s) => s.traceId))];
}

/**
 * Waits for one trace that holds spans matching every matcher, in that order of start time (each one
 * starting no earlier than the one before), and returns its spans by start time.
 */
export async function traceCovering(
  receiver: OtlpReceiver,
  root: (s: ReceivedSpan) => boolean,
  steps: readonly { readonly label: string; readonly match: (s: ReceivedSpan) => boolean }[],
  timeoutMs = 30_000,
): Promise<ReceivedSpan[]> {
  let last = '';
  return waitFor(
    'one trace covering every step in order',
    () => {
      for (const id of tracesWith(receiver, root)) {
        const spans = receiver.trace(id);
        const missing = missingStep(spans, steps);
        if (missing === undefined) return spans;
        last = `trace ${id} lacks ${missing}:\n${describeTrace(spans)}`;
      }
      return undefined;
    },
    { timeoutMs, describe: async () => last },
  );
}

/** The label of the first step not found after the previous one, or undefined when all are. */
function missingStep(
  spans: readonly ReceivedSpan[],
  steps: readonly { readonly label: string; readonly match: (s: ReceivedSpan) => boolean }[],
): string | undefined {
  let from = 0n;
  for (const step of steps) {
    const found = spans.find((s) => s.startNs >= from && step.match(s));
    if (found === undefined) return step.label;
    from = found.startNs;
  }
  return undefined;
}
