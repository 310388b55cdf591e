// inSpan: with tracing off the work runs exactly as without tracing code (its own promise, no span); with a
// provider registered, one span per call, failed with the error's class and never its message.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

import { inSpan, setTracingActive } from './spans.js';

describe('inSpan with tracing off', () => {
  beforeAll(() => setTracingActive(false));

  test("the caller gets the function's own promise and the function no span", async () => {
    const result = Promise.resolve(7);
    let given: unknown = 'not called';
    const returned = inSpan('planner pass', {}, (span) => {
      given = span;
      return result;
    });
    expect(returned).toBe(result);
    expect(given).toBeUndefined();
    await expect(returned).resolves.toBe(7);
  });

  test('a synchronous throw reaches the caller as a rejection, as from an async function', async () => {
    const thrown = new TypeError('broken');
    const returned = inSpan('planner pass', {}, () => {
      throw thrown;
    });
    await expect(returned).rejects.toBe(thrown);
  });
});

describe('inSpan with a tracer provider', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    setTracingActive(true);
  });
  afterAll(async () => {
    setTracingActive(false);
    trace.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  test('one span with the attributes, ended when the work settles', async () => {
    await expect(
      inSpan('planner pass', { attributes: { 'rolepolicy.name': 'db-1' } }, async (span) => {
        expect(span).toBeDefined();
        return 'done';
      }),
    ).resolves.toBe('done');
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('planner pass');
    expect(span?.attributes['rolepolicy.name']).toBe('db-1');
    expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  test("a failure marks the span with the error's class only, never its message", async () => {
    const secret = 'password authentication failed for postgres://app:hunter2@db/app';
    await expect(
      inSpan('executor statements', {}, async () => {
        throw new RangeError(secret);
      }),
    ).rejects.toThrow(RangeError);
    const [span] = exporter.getFinishedSpans();
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['error.type']).toBe('RangeError');
    expect(JSON.stringify([span?.attributes, span?.status, span?.events])).not.toContain('hunter2');
  });
});
