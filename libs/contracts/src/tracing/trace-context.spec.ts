// The NATS header carrier of W3C trace context: what a sender writes is what a receiver reads back, nothing
// is written with tracing off, and a message without (or with a broken) traceparent starts no trace.
import { ROOT_CONTEXT, TraceFlags, propagation, trace, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator, TraceState } from '@opentelemetry/core';
import { headers } from '@nats-io/transport-node';
import {
  carrierOf,
  carrierOfContext,
  contextFromCarrier,
  contextFromHeaders,
  traceHeaders,
  tracePropagationOn,
} from './trace-context.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

function sending(state?: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    traceFlags: TraceFlags.SAMPLED,
    ...(state === undefined ? {} : { traceState: new TraceState(state) }),
  });
}

describe('with tracing off (no propagator registered)', () => {
  beforeAll(() => propagation.disable());

  test('nothing is written and reading a message gives the base context', () => {
    expect(tracePropagationOn()).toBe(false);
    expect(traceHeaders(sending())).toBeUndefined();
    const existing = headers();
    existing.set('Nats-Msg-Id', 'x');
    expect(traceHeaders(sending(), existing)).toBe(existing);
    expect(existing.has('traceparent')).toBe(false);
    const received = headers();
    received.set('traceparent', `00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(contextFromHeaders(received)).toBe(ROOT_CONTEXT);
    expect(carrierOf(received)).toBeUndefined();
    expect(carrierOfContext(sending())).toBeUndefined();
  });
});

describe('with the W3C propagator registered', () => {
  beforeAll(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
  afterAll(() => propagation.disable());

  test('the receiver continues the sender span as a remote parent, trace state included', () => {
    const sent = traceHeaders(sending('vendor=a1'))!;
    expect(sent.get('traceparent')).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(sent.get('tracestate')).toBe('vendor=a1');
    const parent = trace.getSpanContext(contextFromHeaders(sent));
    expect(parent).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, isRemote: true, traceFlags: 1 });
    expect(parent?.traceState?.get('vendor')).toBe('a1');
  });

  test('trace fields are added to headers the message already has', () => {
    const existing = headers();
    existing.set('Nats-Msg-Id', 'abc');
    const sent = traceHeaders(sending(), existing);
    expect(sent).toBe(existing);
    expect(existing.get('Nats-Msg-Id')).toBe('abc');
    expect(existing.get('traceparent')).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
  });

  test('no span to continue: no headers are made', () => {
    expect(traceHeaders(ROOT_CONTEXT)).toBeUndefined();
  });

  test('a message without trace context, or with a malformed one, starts no trace', () => {
    expect(trace.getSpanContext(contextFromHeaders(headers()))).toBeUndefined();
    expect(trace.getSpanContext(contextFromHeaders(undefined))).toBeUndefined();
    const broken = headers();
    broken.set('traceparent', 'not-a-traceparent');
    expect(trace.getSpanContext(contextFromHeaders(broken))).toBeUndefined();
  });

  test('a carrier kept past the message (a cache entry) resolves to the same parent', () => {
    const sent = traceHeaders(sending('vendor=b2'))!;
    const kept = carrierOf(sent);
    expect(kept).toEqual({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'vendor=b2' });
    expect(trace.getSpanContext(contextFromCarrier(kept))).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
    });
    expect(carrierOfContext(sending())).toEqual({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01` });
    expect(contextFromCarrier(undefined)).toBe(ROOT_CONTEXT);
  });
});
