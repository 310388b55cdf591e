// Keeps one trace across the round trip through the Kubernetes API (docs/tracing.md): a command the gateway
// applied remembers its trace under the object and the resourceVersion it wrote, and the watch event that
// brings that version back is published in the same trace. A plan or an access request is one change from
// creation to its end, so its later events (a person's approval, a status write) stay in its trace too.
// Other events start a trace of their own; resyncs are not traced.
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import {
  SPAN_ATTRIBUTES,
  SpanKind,
  carrierOfContext,
  contextFromCarrier,
  definedAttributes,
  inSpan,
  tracingActive,
  type TraceCarrier,
} from '@rolepolicy/contracts';
import type { ResourceChange } from './informer-set.js';

/** Kinds whose every event continues the trace that created the object. */
const LIFECYCLE_KINDS: ReadonlySet<string> = new Set(['PostgresPolicyPlan', 'EphemeralAccessRequest']);

/** Objects remembered at most (the oldest is forgotten first). */
const MAX_REMEMBERED = 4_000;

type Remembered = { readonly resourceVersion: string | undefined; readonly carrier: TraceCarrier };

/** The trace of the gateway's last write per object. */
export class TraceLinks {
  private readonly byObject = new Map<string, Remembered>();

  /** After a command wrote `resourceVersion` of the object: the active trace continues with its event. */
  wrote(kind: string, namespace: string, name: string, resourceVersion: string | undefined): void {
    if (!tracingActive()) return;
    const carrier = carrierOfContext();
    if (carrier === undefined) return;
    const key = `${kind}/${namespace}/${name}`;
    this.byObject.delete(key);
    this.byObject.set(key, { resourceVersion, carrier });
    if (this.byObject.size > MAX_REMEMBERED) {
      const oldest = this.byObject.keys().next().value;
      if (oldest !== undefined) this.byObject.delete(oldest);
    }
  }

  /** The trace an event of the object continues, if any. */
  parentOf(
    kind: string,
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
  ): TraceCarrier | undefined {
    const key = `${kind}/${namespace}/${name}`;
    const remembered = this.byObject.get(key);
    if (remembered === undefined) return undefined;
    if (remembered.resourceVersion === resourceVersion || LIFECYCLE_KINDS.has(kind))
      return remembered.carrier;
    return undefined;
  }

  /** Forgets a deleted object. */
  forget(kind: string, namespace: string, name: string): void {
    this.byObject.delete(`${kind}/${namespace}/${name}`);
  }
}

/**
 * Runs the publish of one watched change inside its `k8s-gateway watch` span (a producer span whose context
 * the resource event carries), or, for a resync or with tracing off, outside any trace.
 */
export async function inWatchSpan(
  links: TraceLinks,
  change: ResourceChange,
  publish: () => Promise<void>,
): Promise<void> {
  if (!tracingActive()) return publish();
  if (change.reason === 'resync') return context.with(ROOT_CONTEXT, publish);
  const meta = change.object.metadata ?? {};
  const kind = change.kind.kind;
  const namespace = meta.namespace ?? '';
  const name = meta.name ?? '';
  const parent = links.parentOf(kind, namespace, name, meta.resourceVersion);
  if (change.reason === 'delete') links.forget(kind, namespace, name);
  await inSpan(
    `k8s-gateway watch ${kind}`,
    {
      kind: SpanKind.PRODUCER,
      parent: contextFromCarrier(parent),
      attributes: definedAttributes({
        [SPAN_ATTRIBUTES.service]: 'k8s-gateway',
        [SPAN_ATTRIBUTES.kind]: kind,
        [SPAN_ATTRIBUTES.namespace]: namespace,
        [SPAN_ATTRIBUTES.name]: name,
        [SPAN_ATTRIBUTES.generation]: meta.generation,
        [SPAN_ATTRIBUTES.resourceVersion]: meta.resourceVersion,
        [SPAN_ATTRIBUTES.event]: change.reason,
      }),
    },
    publish,
  );
}
