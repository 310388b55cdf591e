// Carry out, for an executor result: the records after-result.ts decides (the plan's status, the request's
// error, the revocation lag, the log line), then the request's pass, which reads the result from the plan.
import type { ResourceCache, ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { afterResult } from './after-result.js';
import { requestKey } from './change-keys.js';
import type { CommandSink } from './command-sink.js';
import { statusCommand, type Ref } from './commands.js';
import type { SchedulerLog } from './scheduler-deps.js';
import type { SchedulerWrites } from './scheduler-writes.js';
import type { ScopedRequests } from './scoped-requests.js';

/** What recording a result reads and where it writes. */
export interface ResultContext {
  readonly cache: Pick<ResourceCache, 'get'>;
  readonly sink: Pick<CommandSink, 'send'>;
  readonly scoped: Pick<ScopedRequests, 'blocked'>;
  readonly writes: Pick<SchedulerWrites, 'planStatusWritten' | 'resultArrived'>;
  readonly log: SchedulerLog;
  readonly observeRevocationLag?: (seconds: number) => void;
  /** Queues the request's pass. */
  triggerRequest(ns: string, name: string): void;
}

/** Records an executor result: the plan's status, the request's error, then a pass of the request. */
export async function handleResult(
  ctx: ResultContext,
  result: ScopedExecuteResultV1,
  now: number,
): Promise<void> {
  const ns = result.request.namespace;
  const request = ctx.cache.get('ephemeralaccessrequest', ns, result.request.name);
  const record = afterResult(result, request, now);
  if (record.kind === 'sweep') {
    ctx.log[record.log.level](record.log.line);
    return;
  }
  const requestRef: Ref = {
    kind: 'EphemeralAccessRequest',
    namespace: ns,
    name: result.request.name,
    uid: result.request.uid,
  };
  if (record.revocationLagSeconds !== undefined) ctx.observeRevocationLag?.(record.revocationLagSeconds);
  if (record.requestError !== undefined) {
    await ctx.sink.send(statusCommand(requestRef, { lastError: record.requestError }), requestRef);
    // Asked again a little later (the condition may clear, e.g. the original target restored).
    ctx.scoped.blocked(ns, result.plan.name, now);
  }
  if (record.planStatus !== null) {
    const planRef: Ref = {
      kind: 'PostgresPolicyPlan',
      namespace: ns,
      name: result.plan.name,
      uid: result.plan.uid,
    };
    await ctx.sink.send(statusCommand(planRef, record.planStatus), requestRef);
    // Shown by content (the phase), so the version it was based on does not matter.
    ctx.writes.planStatusWritten(ns, result.plan.name, record.planStatus);
  }
  ctx.log[record.log.level](record.log.line);
  ctx.writes.resultArrived(requestKey(ns, result.request.name));
  ctx.triggerRequest(ns, result.request.name);
}
