// The fleet bench's hops read from a trace, and its check that they agree with the status times (issue 30).
import type { ReceivedSpan } from '@rolepolicy/testing';
import { TraceHops, disagreeingHops, hopDifferences } from './trace-hops.js';

const MS = 1_000_000n;

function span(name: string, startMs: number, endMs: number, attributes: Record<string, string> = {}) {
  return {
    traceId: 't1',
    spanId: name,
    parentSpanId: undefined,
    name,
    kind: 1,
    startNs: BigInt(startMs) * MS,
    endNs: BigInt(endMs) * MS,
    attributes,
    serviceName: 'x',
    status: 0,
  } satisfies ReceivedSpan;
}

const plan = { 'rolepolicy.namespace': 'bench', 'rolepolicy.policy': 'latency-1', 'rolepolicy.plan': 'p1' };

describe('fleet bench hops from the trace', () => {
  it('reads planned -> applying -> committed -> Ready written from the span boundaries', () => {
    const hops = new TraceHops();
    hops.collect([span('planner create plan', 1_000, 1_030, plan), span('executor applying', 1_250, 1_260)]);
    expect(hops.hopsOf('bench', 'latency-1')).toBeUndefined(); // the rest has not arrived yet
    hops.collect([
      span('executor statements', 1_262, 1_290),
      span('executor commit', 1_290, 1_295),
      span('planner record result', 1_340, 1_350, { 'rolepolicy.plan': 'p1' }),
    ]);
    expect(hops.hopsOf('bench', 'latency-1')).toEqual({
      plannedToApplying: 250,
      applyingToCommitted: 45,
      committedToReadyWritten: 45,
    });
  });

  it('fails a hop that differs by more than 1 ms, or whose trace is missing', () => {
    const status = [
      { createToPlanned: 190, plannedToApplying: 250, applyingToCommitted: 45, committedToReadyWritten: 45 },
    ];
    const same = { plannedToApplying: 250, applyingToCommitted: 45, committedToReadyWritten: 45 };
    expect(disagreeingHops(hopDifferences(status, [same]))).toEqual([]);
    expect(disagreeingHops(hopDifferences(status, [{ ...same, applyingToCommitted: 46.5 }]))).toEqual([
      'applyingToCommitted by 1.5 ms',
    ]);
    expect(disagreeingHops(hopDifferences(status, [undefined]))).toHaveLength(3);
  });
});
