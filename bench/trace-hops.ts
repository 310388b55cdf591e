// The single policy's hops read from its trace (`fleet --tracing`): the span boundaries that stand for the
// status times `hopsOf` reads (docs/tracing.md, "The trace and the bench agree"). The services take each pair
// from one clock reading, so a hop both measure must agree within a millisecond.
import type { ReceivedSpan } from '@rolepolicy/testing';

/** The spans hops are read from; every other span is dropped as it arrives. */
const HOP_SPANS = new Set([
  'planner create plan',
  'executor applying',
  'executor commit',
  'planner record result',
]);

/** The hops both the status times and the trace measure (`hopsOf` in fleet.bench.ts has two more). */
export const TRACE_HOPS = ['plannedToApplying', 'applyingToCommitted', 'committedToReadyWritten'] as const;

/** Largest difference, in ms, between a hop from the status times and the same hop from the trace. */
export const HOP_TOLERANCE_MS = 1;

const ms = (ns: bigint): number => Number(ns / 1000n) / 1000;

/** Keeps the spans of the hop boundaries from an OTLP receiver's batches; reads one policy's hops from them. */
export class TraceHops {
  private readonly spans: ReceivedSpan[] = [];

  /** An `OtlpReceiver` `onSpans` callback. */
  readonly collect = (batch: readonly ReceivedSpan[]): void => {
    for (const s of batch) if (HOP_SPANS.has(s.name)) this.spans.push(s);
  };

  /**
   * The hops of the policy's first plan, from its trace: plan computed (`planner create plan` starts) ->
   * applying (`executor applying` starts) -> committed (`executor commit` ends) -> Ready written (`planner
   * record result` starts). Undefined until every span of it arrived.
   */
  hopsOf(namespace: string, policy: string): Record<string, number> | undefined {
    const created = this.spans.find(
      (s) =>
        s.name === 'planner create plan' &&
        s.attributes['rolepolicy.namespace'] === namespace &&
        s.attributes['rolepolicy.policy'] === policy,
    );
    if (created === undefined) return undefined;
    const plan = created.attributes['rolepolicy.plan'];
    const inTrace = (name: string, match: (s: ReceivedSpan) => boolean = () => true) =>
      this.spans.find((s) => s.traceId === created.traceId && s.name === name && match(s));
    const applying = inTrace('executor applying');
    const commit = inTrace('executor commit');
    const recorded = inTrace('planner record result', (s) => s.attributes['rolepolicy.plan'] === plan);
    if (applying === undefined || commit === undefined || recorded === undefined) return undefined;
    return {
      plannedToApplying: ms(applying.startNs) - ms(created.startNs),
      applyingToCommitted: ms(commit.endNs) - ms(applying.startNs),
      committedToReadyWritten: ms(recorded.startNs) - ms(commit.endNs),
    };
  }

  /** The hops of each policy, waiting up to `timeoutMs` for their spans (exported in batches, seconds late). */
  async waitForHops(
    namespace: string,
    policies: readonly string[],
    timeoutMs: number,
  ): Promise<(Record<string, number> | undefined)[]> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const hops = policies.map((p) => this.hopsOf(namespace, p));
      if (hops.every((h) => h !== undefined) || performance.now() > deadline) return hops;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Per hop the trace measures too: the largest |status - trace| over the runs, in ms (rounded to µs); a run
 * whose trace did not arrive counts as NaN, so it cannot pass for agreement.
 */
export function hopDifferences(
  fromStatus: readonly Record<string, number>[],
  fromTrace: readonly (Record<string, number> | undefined)[],
): Record<string, number> {
  return Object.fromEntries(
    TRACE_HOPS.map((hop) => {
      const gaps = fromStatus.map((s, i) => Math.abs(s[hop]! - (fromTrace[i]?.[hop] ?? NaN)));
      return [hop, Math.round(Math.max(...gaps) * 1000) / 1000];
    }),
  );
}

/** The hops that differ by more than {@link HOP_TOLERANCE_MS} (or could not be compared). */
export function disagreeingHops(differences: Readonly<Record<string, number>>): string[] {
  return Object.entries(differences)
    .filter(([, gap]) => !(gap <= HOP_TOLERANCE_MS))
    .map(([hop, gap]) => `${hop} by ${gap} ms`);
}
