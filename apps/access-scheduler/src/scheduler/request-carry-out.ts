// Carry out, for one request's pass: what the pure decision (decideRequest) asked for, in the order the
// gateway must apply it: plans first, then the request's status, its Event and audit line, the other
// actions (finalizers, scoped requests, deletes), and its next timer.
import type { Cached } from '@rolepolicy/contracts';
import type { AuditRecord } from '@rolepolicy/contracts';
import { auditRecord, transitionEvent } from '../lifecycle/audit.js';
import { REQUEST_FINALIZER, type RequestAction, type RequestDecision } from '../lifecycle/request-machine.js';
import { planNameOf, scopedPlanObject } from '../lifecycle/scoped-plan.js';
import { scopedPlanTarget } from '../lifecycle/target.js';
import { timestamp } from '../lifecycle/time.js';
import { requestKey } from './change-keys.js';
import type { CommandSink } from './command-sink.js';
import {
  createPlanCommand,
  deleteCommand,
  finalizerCommand,
  refOf,
  replacingPatch,
  statusCommand,
  type Ref,
} from './commands.js';
import type { TimerJob } from './queues.js';
import type { RequestFacts } from './request-gather.js';
import type { SchedulerWrites } from './scheduler-writes.js';
import type { ScopedRequests } from './scoped-requests.js';

type EphemeralAccessRequest = Cached<'ephemeralaccessrequest'>;

/** Where a request pass's writes go. */
export interface RequestCarryOutDeps {
  readonly sink: Pick<CommandSink, 'send'>;
  readonly scoped: Pick<ScopedRequests, 'send' | 'planCreated'>;
  readonly writes: Pick<
    SchedulerWrites,
    'statusWritten' | 'chainedStatusWritten' | 'planCreated' | 'planCreatePending'
  >;
  /** A scoped plan as the scheduler sees it (its own writes included). */
  plan(ns: string, name: string): Cached<'postgrespolicyplan'> | undefined;
  readonly schedule: (job: TimerJob, now: number) => Promise<void>;
  readonly audit: (record: AuditRecord) => void;
  readonly log: { warn(m: string): void };
}

/**
 * Carries out the decision of one request's pass, gathered as `facts`, at `now`. `chained`: the pass
 * decided on our own status write the cache does not show yet (scheduler-writes.ts, RequestView).
 */
export async function carryOutRequest(
  deps: RequestCarryOutDeps,
  facts: RequestFacts,
  decision: RequestDecision,
  now: number,
  chained = false,
): Promise<void> {
  const { request } = facts;
  const { namespace: ns, name } = request.metadata;
  const ref: Ref = { kind: 'EphemeralAccessRequest', namespace: ns, name, uid: request.metadata.uid };
  const current = decision.status === null ? request : { ...request, status: decision.status };
  // A plan first (the gateway applies one request's commands in order): the executor can be asked one write sooner, and a
  // plan never depends on this status write (an activation plan is only made once Applying is persisted).
  // Finalizers after it: they move the resourceVersion the status write is bound to.
  for (const action of decision.actions)
    if (action.kind === 'createPlan') await act(deps, action, current, ref, facts, now);
  if (decision.status !== null) {
    // A write decided on our own pending write follows it in the gateway's order (one request's commands
    // are applied one at a time): it cannot name the version that write will make, and is sent without one.
    // The first write of the chain carried the version the decision was made on.
    const basedOn = chained ? undefined : request.metadata.resourceVersion;
    await deps.sink.send(statusCommand(ref, replacingPatch(request.status, decision.status), basedOn), ref);
    if (chained) deps.writes.chainedStatusWritten(requestKey(ns, name), decision.status);
    else deps.writes.statusWritten(requestKey(ns, name), basedOn, decision.status);
  }
  if (decision.transition !== null) {
    await deps.sink.send(
      { v: 1, command: 'record-event', target: refOf(ref), event: transitionEvent(decision.transition) },
      ref,
    );
    deps.audit(auditRecord(request, decision.transition, timestamp(now), decision.status ?? undefined));
  }
  for (const action of decision.actions)
    if (action.kind !== 'createPlan') await act(deps, action, current, ref, facts, now);
  if (decision.deadline !== null) {
    const { kind, at } = decision.deadline;
    await deps.schedule({ kind, namespace: ns, name, uid: request.metadata.uid ?? '', at }, now);
  }
}

/** One action of the decision, on the request as the decision leaves it (`request`). */
async function act(
  deps: RequestCarryOutDeps,
  action: RequestAction,
  request: EphemeralAccessRequest,
  ref: Ref,
  facts: RequestFacts,
  now: number,
): Promise<void> {
  switch (action.kind) {
    case 'addFinalizer':
      await deps.sink.send(finalizerCommand(ref, REQUEST_FINALIZER, true), ref);
      return;
    case 'removeFinalizer':
      await deps.sink.send(finalizerCommand(ref, REQUEST_FINALIZER, false), ref);
      return;
    case 'createPlan':
      await createPlan(deps, action, request, ref, facts, now);
      return;
    case 'sendScoped':
      await deps.scoped.send(request, action.operation, now);
      return;
    case 'deletePlan':
      await deleteForeignPlan(deps, action, ref, facts);
      return;
    default: {
      const never: never = action;
      return never;
    }
  }
}

/** Creates (or re-arms) a scoped plan, once until the cache shows it; a new revoke plan is asked for at once. */
async function createPlan(
  deps: RequestCarryOutDeps,
  action: Extract<RequestAction, { kind: 'createPlan' }>,
  request: EphemeralAccessRequest,
  ref: Ref,
  facts: RequestFacts,
  now: number,
): Promise<void> {
  const ns = ref.namespace;
  const name = planNameOf(request, action.operation);
  const existing = deps.plan(ns, name);
  if (deps.writes.planCreatePending(ns, name, existing)) return;
  const fresh = existing === undefined;
  const view = scopedPlanTarget(facts.target, facts.activationPlan);
  if (view === null) {
    deps.log.warn(`request ${ns}/${ref.name}: no target to build the ${action.operation} plan from`);
    return;
  }
  const built = scopedPlanObject(
    request,
    request.status!.resolvedAccess!,
    view,
    action.operation,
    timestamp(now),
  );
  await deps.sink.send(createPlanCommand(ns, name, built.object, built.status), ref);
  deps.writes.planCreated(ns, name, existing?.metadata.resourceVersion);
  deps.scoped.planCreated(ns, name);
  // A new revoke plan: ask the executor at once; a revoke does not wait for its plan, which is only its
  // record (ADR 0013). An activation is sent once the cache shows its plan (the provenance anchor): sent
  // sooner it would wait on the gateway and spend its redeliveries. A re-armed plan waits for the cache.
  if (fresh && action.operation === 'Revoke')
    await deps.scoped.send(request, action.operation, now, view.name);
}

/** Deletes an object that holds a plan name of the request but is not the scheduler's plan (ADR 0020). */
async function deleteForeignPlan(
  deps: RequestCarryOutDeps,
  action: Extract<RequestAction, { kind: 'deletePlan' }>,
  ref: Ref,
  facts: RequestFacts,
): Promise<void> {
  // Bound to the squatter's uid: a plan of ours created meanwhile under the name survives.
  const plan = action.operation === 'Activate' ? facts.activationPlan : facts.revokePlan;
  if (plan === undefined) return;
  const ns = ref.namespace;
  await deps.sink.send(
    deleteCommand({
      kind: 'PostgresPolicyPlan',
      namespace: ns,
      name: plan.metadata.name,
      uid: plan.metadata.uid,
    }),
    ref,
  );
  deps.log.warn(
    `request ${ns}/${ref.name}: deleting PostgresPolicyPlan ${plan.metadata.name} (uid ${plan.metadata.uid ?? ''}), which holds its ${action.operation} plan name but was not created by the access-scheduler`,
  );
}
