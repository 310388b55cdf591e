// The executor's spans (docs/tracing.md): the consumer span of a request (made by the transport) names the
// plan, policy and digest; the Applying write, the lock wait, the statements and the commit are spans of their
// own, with the statement count but never a statement's text.
import { context, trace } from '@opentelemetry/api';
import type { ExecutionPhases, PhaseEnd } from '@rolepolicy/catalog';
import {
  SPAN_ATTRIBUTES,
  definedAttributes,
  inSpan,
  markFailed,
  rolepolicyTracer,
  tracingActive,
} from '@rolepolicy/contracts';

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
 * The phases of one `executeUnderLock`: with tracing on, a span each (children of the active span); either
 * way, `committedAt`, the moment the commit returned. That one clock reading is the plan's `appliedAt` and
 * the end of the `executor commit` span, so the trace and the status agree (docs/tracing.md).
 */
export class ExecutionPhaseSpans implements ExecutionPhases {
  committedAt: Date | undefined;
  private readonly parent = tracingActive() ? context.active() : undefined;

  begin(phase: Parameters<ExecutionPhases['begin']>[0], statementCount?: number): PhaseEnd {
    const attributes = definedAttributes({
      [SPAN_ATTRIBUTES.service]: 'executor',
      [SPAN_ATTRIBUTES.statements]: statementCount,
    });
    const span =
      this.parent === undefined
        ? undefined
        : rolepolicyTracer().startSpan(`executor ${phase}`, { attributes }, this.parent);
    return (error) => {
      const at = new Date();
      if (phase === 'commit' && error === undefined) this.committedAt = at;
      if (error !== undefined) markFailed(span, error);
      span?.end(at);
    };
  }
}

/** The phases of one execution (see {@link ExecutionPhaseSpans}). */
export function executionPhases(): ExecutionPhaseSpans {
  return new ExecutionPhaseSpans();
}

/**
 * Runs the plan's Applying write and report in the `executor applying` span, which starts at `at`: the
 * clock reading the plan carries as `applyingSince`.
 */
export function inApplyingSpan(at: Date, write: () => Promise<void>): Promise<void> {
  const attributes = { [SPAN_ATTRIBUTES.service]: 'executor' };
  return inSpan('executor applying', { startTime: at, attributes }, () => write());
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
