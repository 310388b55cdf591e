// The access-scheduler's spans (docs/tracing.md): a request's pass continues the trace of the request's last
// event (the k8s-gateway keeps every event of a request in the trace of its creation), so creation, activation,
// the expiry timer's revocation and the end all fall into one trace. The pass names the request, the phase
// transition and the scoped operations it sent.
import { trace } from '@opentelemetry/api';
import {
  SPAN_ATTRIBUTES,
  contextFromCarrier,
  definedAttributes,
  inSpan,
  tracingActive,
  type ResourceChange,
  type TraceCarrier,
} from '@rolepolicy/contracts';
import type { RequestDecision } from '../lifecycle/request-types.js';

/** Per request key: the trace of its latest event. */
export class RequestTraces {
  private readonly byKey = new Map<string, TraceCarrier>();

  /** Remembers the trace of a request's event (forgets a deleted request's). */
  noteChange(change: ResourceChange, key: string): void {
    if (change.kind !== 'ephemeralaccessrequest') return;
    if (change.type === 'delete') this.byKey.delete(key);
    else if (change.trace !== undefined) this.byKey.set(key, change.trace);
  }

  get(key: string): TraceCarrier | undefined {
    return this.byKey.get(key);
  }
}

/** Runs one pass of a request in an `access-scheduler pass` span continuing the request's trace. */
export function inRequestSpan(
  carrier: TraceCarrier | undefined,
  namespace: string,
  name: string,
  pass: () => Promise<void>,
): Promise<void> {
  if (!tracingActive()) return pass();
  return inSpan(
    'access-scheduler pass',
    {
      parent: contextFromCarrier(carrier),
      attributes: {
        [SPAN_ATTRIBUTES.service]: 'access-scheduler',
        [SPAN_ATTRIBUTES.kind]: 'EphemeralAccessRequest',
        [SPAN_ATTRIBUTES.namespace]: namespace,
        [SPAN_ATTRIBUTES.name]: name,
      },
    },
    () => pass(),
  );
}

/** Names the request's generation, transition and scoped operations on the running pass span. */
export function noteRequestDecision(generation: number | undefined, decision: RequestDecision): void {
  const span = trace.getActiveSpan();
  if (span === undefined || !tracingActive()) return;
  const sent = decision.actions
    .filter((a) => a.kind === 'sendScoped')
    .map((a) => (a.kind === 'sendScoped' ? a.operation : ''));
  span.setAttributes(
    definedAttributes({
      [SPAN_ATTRIBUTES.generation]: generation,
      [SPAN_ATTRIBUTES.outcome]:
        decision.transition === null ? undefined : `${decision.transition.from}->${decision.transition.to}`,
      'rolepolicy.scoped_operation': sent.length === 0 ? undefined : sent.join(','),
    }),
  );
}
