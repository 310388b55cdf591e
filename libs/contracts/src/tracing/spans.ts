// The spans of rolepolicy (docs/tracing.md): one tracer, the attribute names every service uses for the
// resource a span is about, and a helper that runs a function inside a span. Attributes name resources
// (kind, namespace, name, generation, plan digest) and counts; never a secret value, a connection URL or
// SQL text. With tracing off (no SDK started) `inSpan` calls the function directly: no span is made.
import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';

/** Instrumentation scope of every rolepolicy span. */
export const TRACER_NAME = 'rolepolicy';

/** Attribute names of rolepolicy spans (values: identities and counts only). */
export const SPAN_ATTRIBUTES = {
  /** The service that made the span (`k8s-gateway`, `planner`, ...); children inherit it. */
  service: 'rolepolicy.service',
  /** Kubernetes kind of the resource the span is about (`PostgresPolicy`, `PostgresPolicyPlan`, ...). */
  kind: 'rolepolicy.kind',
  namespace: 'rolepolicy.namespace',
  name: 'rolepolicy.name',
  generation: 'rolepolicy.generation',
  resourceVersion: 'rolepolicy.resource_version',
  /** The policy a plan or request belongs to. */
  policy: 'rolepolicy.policy',
  /** The plan a span works on. */
  plan: 'rolepolicy.plan',
  /** The plan's change digest (`sha256:...`). */
  planDigest: 'rolepolicy.plan.digest',
  /** What the span decided or ended with (a decision kind, a phase, a command outcome). */
  outcome: 'rolepolicy.outcome',
  /** A k8s-gateway command (`patch-status`, `apply-resource`, ...). */
  command: 'rolepolicy.command',
  /** Number of SQL statements (never their text). */
  statements: 'rolepolicy.statement_count',
  /** Resource event type: `upsert` or `delete`. */
  event: 'rolepolicy.event',
  messagingSystem: 'messaging.system',
  messagingDestination: 'messaging.destination.name',
  deliveryCount: 'messaging.nats.delivery_count',
} as const;

let active = false;

/** Set by the runtime's telemetry setup when it starts (true) and shuts down (false) the SDK. */
export function setTracingActive(on: boolean): void {
  active = on;
}

/** True while a telemetry SDK started by this process records spans. */
export function tracingActive(): boolean {
  return active;
}

/** The rolepolicy tracer of the registered provider (looked up per use: the provider may be replaced). */
export function rolepolicyTracer(): ReturnType<typeof trace.getTracer> {
  return trace.getTracer(TRACER_NAME);
}

/** Options of {@link inSpan}. */
export type InSpanOptions = {
  readonly attributes?: Attributes;
  readonly kind?: SpanKind;
  /** Parent context; default the active one. */
  readonly parent?: Context;
  readonly links?: readonly Link[];
  /**
   * When the span starts, when it is a moment the service also writes down (a plan's `computedAt`, its
   * `applyingSince`): one clock reading for both, so the trace and the status agree (docs/tracing.md).
   */
  readonly startTime?: Date;
};

/** Attributes without undefined values (the API drops them anyway; this keeps call sites short). */
export function definedAttributes(
  values: Readonly<Record<string, string | number | boolean | undefined>>,
): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * Runs `fn` inside a new span (the active span while it runs) and ends the span when `fn` settles. A
 * thrown error marks the span failed with the error's class name only (messages can quote the database).
 * With tracing off, `fn` runs as is and receives undefined.
 */
export function inSpan<T>(
  name: string,
  options: InSpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (active) return inNewSpan(name, options, fn);
  // Not async itself: with tracing off the caller gets fn's own promise, no wrapper and no extra tick
  // (a synchronous throw still becomes a rejection, as from an async function).
  try {
    return fn(undefined);
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

async function inNewSpan<T>(
  name: string,
  options: InSpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = rolepolicyTracer().startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      attributes: { ...serviceOf(parent), ...options.attributes },
      ...(options.links ? { links: [...options.links] } : {}),
      ...(options.startTime ? { startTime: options.startTime } : {}),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * The service attribute of the parent span when it was made in this process (the SDK's span exposes its
 * attributes), so a library's span is filed under the service that called it.
 */
function serviceOf(parent: Context): Attributes {
  const attributes = (trace.getSpan(parent) as { attributes?: Attributes } | undefined)?.attributes;
  const service = attributes?.[SPAN_ATTRIBUTES.service];
  return service === undefined ? {} : { [SPAN_ATTRIBUTES.service]: service };
}

/** Marks a span failed, naming the error's class (never its message). */
export function markFailed(span: Span | undefined, error: unknown): void {
  if (span === undefined) return;
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

export { SpanKind };
