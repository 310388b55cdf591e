// The executor's spans (docs/tracing.md): the consumer span of a request (made by the transport) names the
// plan, policy and digest; the lock wait, the statements and the commit are spans of their own, with the
// statement count but never a statement's text.
import { context, trace } from '@opentelemetry/api';
import type { ExecutionPhases } from '@rolepolicy/catalog';
import { SPAN_ATTRIBUTES, markFailed, rolepolicyTracer, tracingActive } from '@rolepolicy/contracts';

/** Names what the running request span works on (a no-op with tracing off). */
export function noteRequest(fields: {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly policy?: string;
  readonly digest?: string;
}): void {
  if (!tracingActive()) return;
  trace.getActiveSpan()?.setAttributes({
    [SPAN_ATTRIBUTES.kind]: fields.kind,
    [SPAN_ATTRIBUTES.namespace]: fields.namespace,
    [SPAN_ATTRIBUTES.name]: fields.name,
    ...(fields.policy === undefined ? {} : { [SPAN_ATTRIBUTES.policy]: fields.policy }),
    ...(fields.digest === undefined ? {} : { [SPAN_ATTRIBUTES.planDigest]: fields.digest }),
  });
}

/** Names how a request ended on the running request span. */
export function noteOutcome(phase: string, reason: string, statements: number | undefined): void {
  if (!tracingActive()) return;
  const span = trace.getActiveSpan();
  span?.setAttribute(SPAN_ATTRIBUTES.outcome, `${phase}/${reason}`);
  if (statements !== undefined) span?.setAttribute(SPAN_ATTRIBUTES.statements, statements);
}

/**
 * Spans of the phases of `executeUnderLock` (children of the active span), or undefined with tracing off,
 * so the catalog's loop makes no call at all.
 */
export function executionPhases(): ExecutionPhases | undefined {
  if (!tracingActive()) return undefined;
  const parent = context.active();
  const service = { [SPAN_ATTRIBUTES.service]: 'executor' };
  return {
    begin: (phase, statementCount) => {
      const span = rolepolicyTracer().startSpan(
        `executor ${phase}`,
        {
          attributes:
            statementCount === undefined
              ? service
              : { ...service, [SPAN_ATTRIBUTES.statements]: statementCount },
        },
        parent,
      );
      return (error) => {
        if (error !== undefined) markFailed(span, error);
        span.end();
      };
    },
  };
}

/** Names a scoped (ephemeral access) request on the running request span. */
export function noteScopedRequest(request: {
  readonly plan: { readonly namespace: string; readonly name: string };
  readonly request?: { readonly name: string };
  readonly operation: string;
}): void {
  if (!tracingActive()) return;
  trace.getActiveSpan()?.setAttributes({
    [SPAN_ATTRIBUTES.kind]: 'PostgresPolicyPlan',
    [SPAN_ATTRIBUTES.namespace]: request.plan.namespace,
    [SPAN_ATTRIBUTES.name]: request.plan.name,
    'rolepolicy.scoped_operation': request.operation,
    ...(request.request === undefined ? {} : { 'rolepolicy.request': request.request.name }),
  });
}
