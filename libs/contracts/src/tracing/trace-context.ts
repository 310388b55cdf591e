// W3C trace context on NATS messages (issue 30): the OpenTelemetry propagation API writes `traceparent` and
// `tracestate` into a message's headers and reads them back, through a carrier over the NATS header type.
// With no SDK started (the default) no propagator is registered: nothing is written, no header object is
// made, and every read answers the active context, so a service without tracing pays nothing per message.
import {
  ROOT_CONTEXT,
  context,
  propagation,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/** Header-like object the carrier reads: NATS message headers, or a plain map a message left behind. */
export type HeaderSource = Pick<MsgHdrs, 'get' | 'keys'>;

/**
 * The trace context a message carried, kept as plain strings so it can outlive the message (a cache entry
 * remembers which change woke a policy).
 */
export type TraceCarrier = { readonly traceparent: string; readonly tracestate?: string };

/** Reads propagation fields from NATS headers (absent header: undefined, as the API expects). */
export const natsHeaderGetter: TextMapGetter<HeaderSource> = {
  keys: (carrier) => carrier.keys(),
  get: (carrier, key) => {
    const value = carrier.get(key);
    return value === '' ? undefined : value;
  },
};

/** Writes propagation fields into NATS headers, replacing any earlier value of the same field. */
export const natsHeaderSetter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/** True when a propagator is registered, i.e. the telemetry SDK was started in this process. */
export function tracePropagationOn(): boolean {
  return propagation.fields().length > 0;
}

/**
 * Headers carrying `ctx`'s span (default: the active one), or undefined when tracing is off or there is
 * no valid span to continue: callers then send the message exactly as before.
 * @param into headers the message already has (they are returned with the fields added)
 */
export function traceHeaders(ctx: Context = context.active(), into?: MsgHdrs): MsgHdrs | undefined {
  if (!tracePropagationOn()) return into;
  const span = trace.getSpanContext(ctx);
  if (span === undefined || !trace.isSpanContextValid(span)) return into;
  const out = into ?? natsHeaders();
  propagation.inject(ctx, out, natsHeaderSetter);
  return out;
}

/**
 * The context a message's headers carry, on top of `base` (default: the root context, so a consumer's
 * span never becomes the child of whatever happened to be active in its pull loop). Without headers, or
 * with tracing off, `base` itself.
 */
export function contextFromHeaders(source: HeaderSource | undefined, base: Context = ROOT_CONTEXT): Context {
  if (source === undefined || !tracePropagationOn()) return base;
  return propagation.extract(base, source, natsHeaderGetter);
}

/** The trace fields of a message's headers as plain strings (undefined when it carries none). */
export function carrierOf(source: HeaderSource | undefined): TraceCarrier | undefined {
  if (source === undefined || !tracePropagationOn()) return undefined;
  const traceparent = source.get('traceparent');
  if (traceparent === '') return undefined;
  const tracestate = source.get('tracestate');
  return tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/** The context a remembered carrier describes, on top of `base` (default: the root context). */
export function contextFromCarrier(carrier: TraceCarrier | undefined, base: Context = ROOT_CONTEXT): Context {
  if (carrier === undefined || !tracePropagationOn()) return base;
  return propagation.extract(base, carrier, {
    keys: (c) => Object.keys(c),
    get: (c, key) =>
      key === 'traceparent' ? c.traceparent : key === 'tracestate' ? c.tracestate : undefined,
  });
}

/** The carrier of `ctx`'s span (default: the active one), to remember it past the current call. */
export function carrierOfContext(ctx: Context = context.active()): TraceCarrier | undefined {
  if (!tracePropagationOn()) return undefined;
  const fields: Record<string, string> = {};
  propagation.inject(ctx, fields);
  const traceparent = fields['traceparent'];
  if (traceparent === undefined) return undefined;
  const tracestate = fields['tracestate'];
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}
