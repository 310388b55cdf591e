// The planner's spans (docs/tracing.md): a pass continues the trace of the change that woke it (the
// resource event's context, kept per policy until the pass runs), names the policy and what it decided, and
// the steps a person waits on (a plan made, approved, sent to an executor, its result recorded) are spans of
// their own.
import { trace } from '@opentelemetry/api';
import {
  SPAN_ATTRIBUTES,
  contextFromCarrier,
  definedAttributes,
  inSpan,
  tracingActive,
  type ExecuteResultV1,
  type TraceCarrier,
} from '@rolepolicy/contracts';
import { logRecord, type LogRecord } from '@rolepolicy/runtime';
import {
  planDecision,
  type PostgresPolicy,
  type ReconcileDecision,
  type ReconcileStep,
} from '@rolepolicy/plan-lifecycle';

/** Per policy key: the trace of the latest change that woke it, taken by its next pass. */
export class WakeTraces {
  private readonly byKey = new Map<string, TraceCarrier>();

  note(key: string, carrier: TraceCarrier | undefined): void {
    if (carrier !== undefined) this.byKey.set(key, carrier);
  }

  take(key: string): TraceCarrier | undefined {
    const carrier = this.byKey.get(key);
    if (carrier !== undefined) this.byKey.delete(key);
    return carrier;
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}

/** Runs one pass of the policy `key` in a `planner pass` span continuing `carrier`'s trace. */
export function inPassSpan(
  key: string,
  carrier: TraceCarrier | undefined,
  pass: () => Promise<void>,
): Promise<void> {
  if (!tracingActive()) return pass();
  const [namespace = '', name = ''] = key.split('/');
  return inSpan(
    'planner pass',
    {
      parent: contextFromCarrier(carrier),
      attributes: {
        [SPAN_ATTRIBUTES.service]: 'planner',
        [SPAN_ATTRIBUTES.kind]: 'PostgresPolicy',
        [SPAN_ATTRIBUTES.namespace]: namespace,
        [SPAN_ATTRIBUTES.name]: name,
      },
    },
    () => pass(),
  );
}

/** Names the policy generation and the decision on the running pass span. */
export function notePass(policy: PostgresPolicy, decision: ReconcileDecision | undefined): void {
  const span = trace.getActiveSpan();
  if (span === undefined || !tracingActive()) return;
  span.setAttribute(SPAN_ATTRIBUTES.generation, policy.metadata.generation ?? 0);
  if (decision !== undefined) span.setAttribute(SPAN_ATTRIBUTES.outcome, decision.kind);
}

/** The span name of a step a person waits on, or undefined for the others (status writes, events). */
function stepSpanName(step: ReconcileStep): string | undefined {
  if (step.kind === 'createPlan') return 'planner create plan';
  if (step.kind === 'requestExecution') return 'planner request execution';
  if (step.kind !== 'patchPlanStatus') return undefined;
  const purpose = step.purpose.kind;
  return purpose === 'autoApprove' || purpose === 'recordApprovedPhase' ? 'planner approve' : undefined;
}

/** Plan name and digest of a step (none for the others). */
function stepAttributes(step: ReconcileStep, policy: PostgresPolicy): Record<string, string | undefined> {
  const base = {
    [SPAN_ATTRIBUTES.namespace]: policy.metadata.namespace,
    [SPAN_ATTRIBUTES.policy]: policy.metadata.name,
  };
  switch (step.kind) {
    case 'createPlan':
      return {
        ...base,
        [SPAN_ATTRIBUTES.plan]: step.plan.metadata.name,
        [SPAN_ATTRIBUTES.planDigest]: step.plan.status?.changeDigest ?? undefined,
      };
    case 'requestExecution':
      return {
        ...base,
        [SPAN_ATTRIBUTES.plan]: step.request.planName,
        [SPAN_ATTRIBUTES.planDigest]: step.request.changeDigest,
      };
    case 'patchPlanStatus':
      return {
        ...base,
        [SPAN_ATTRIBUTES.plan]: step.patch.name,
        [SPAN_ATTRIBUTES.planDigest]: step.patch.status.changeDigest ?? undefined,
      };
    default:
      return base;
  }
}

/** Runs one step of a decision, in a span of its own when it is one a person waits on. */
export function inStepSpan(
  step: ReconcileStep,
  policy: PostgresPolicy,
  run: () => Promise<void>,
): Promise<void> {
  const name = tracingActive() ? stepSpanName(step) : undefined;
  if (name === undefined) return run();
  const attributes = definedAttributes({
    ...stepAttributes(step, policy),
    [SPAN_ATTRIBUTES.kind]: 'PostgresPolicyPlan',
  });
  // A plan the planner approves as it creates it (approval: auto) is approved in this step too, before it
  // is written: the plan is created approved.
  const approved = step.kind === 'createPlan' && planDecision(step.plan) === 'approved';
  return inSpan(name, { attributes, ...planComputedAt(step) }, async () => {
    if (approved) await inSpan('planner approve', { attributes }, async () => undefined);
    await run();
  });
}

/**
 * A plan's span starts when the plan was computed: the decision's clock reading, which the plan carries as
 * `computedAt`, so the trace and the plan's status give the same moment (the bench's hops read both).
 */
function planComputedAt(step: ReconcileStep): { startTime?: Date } {
  const computedAt = step.kind === 'createPlan' ? Date.parse(step.plan.status?.computedAt ?? '') : NaN;
  return Number.isFinite(computedAt) ? { startTime: new Date(computedAt) } : {};
}

/**
 * Records an executor's result on its policy (status, Event) in a `planner record result` span that starts
 * at `at`: the decision's clock reading, which a condition that moves with it (Ready=True after Applied)
 * carries as `last_transition_time`.
 */
export function inResultSpan(
  policy: PostgresPolicy,
  result: Pick<ExecuteResultV1, 'plan' | 'phase' | 'reason'>,
  at: Date,
  record: () => Promise<void>,
): Promise<void> {
  const attributes = {
    [SPAN_ATTRIBUTES.service]: 'planner',
    [SPAN_ATTRIBUTES.kind]: 'PostgresPolicy',
    [SPAN_ATTRIBUTES.namespace]: policy.metadata.namespace,
    [SPAN_ATTRIBUTES.name]: policy.metadata.name,
    [SPAN_ATTRIBUTES.plan]: result.plan.name,
    [SPAN_ATTRIBUTES.outcome]: `${result.phase}/${result.reason}`,
  };
  return inSpan('planner record result', { startTime: at, attributes }, record);
}

/** The log line of one pass: the policy, its generation and what the pass decided (with a failure's reason). */
export function passLogRecord(
  key: string,
  policy: PostgresPolicy,
  decision: ReconcileDecision,
  failed: string | undefined,
): LogRecord {
  return logRecord(
    `policy ${key} generation ${policy.metadata.generation}: ${decision.kind}${failed === undefined ? '' : ` (${failed})`}, next in ${decision.requeueAfterSeconds}s`,
    {
      kind: 'PostgresPolicy',
      namespace: policy.metadata.namespace,
      name: policy.metadata.name,
      generation: policy.metadata.generation,
      decision: decision.kind,
      // The condition reason only: the message may name database objects, never a secret (redacted),
      // but the reason is what an operator (and the fleet bench) counts.
      ...(failed === undefined ? {} : { reason: failed }),
    },
  );
}
