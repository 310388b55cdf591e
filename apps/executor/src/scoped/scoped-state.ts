// The plan, request, policy and activation plan a scoped execution verifies, read from the executor's cache:
// before the lock at least as new as what the access-scheduler saw when it sent the request (ADR 0030,
// amended), under the lock synced to everything stored before it.
import { activationPlanName } from '@rolepolicy/policy';
import type { ExecutionCluster } from '../execution/execution-cluster.js';
import { verifyScoped, type PlanRequest, type ScopedState } from './scoped-verify.js';

/** How {@link visibleState} waits. */
export interface VisibleWaits {
  /** How long the cache may take to apply the request's `resourceSequences` before it syncs instead. */
  readonly sequenceWaitMs: number;
  /** How long the plan may take to show up once the view is that far. */
  readonly visibilityWaitMs: number;
}

/**
 * The plan, request, policy and activation plan as the cache holds them after catching up with everything
 * stored (`synced`), or as it holds them now.
 */
export async function scopedState(
  request: PlanRequest,
  cluster: ExecutionCluster,
  synced: boolean,
): Promise<ScopedState> {
  if (synced) await cluster.cache.sync();
  const ns = request.plan.namespace;
  const object = cluster.cache.get('ephemeralaccessrequest', ns, request.request.name);
  const activation = object === undefined ? undefined : activationPlanName(object);
  const policy = cluster.cache.get('postgrespolicy', ns, request.policy.name);
  return {
    plan: cluster.cache.get('postgrespolicyplan', ns, request.plan.name),
    request: object,
    policy,
    activationPlan:
      activation === undefined ? undefined : cluster.cache.get('postgrespolicyplan', ns, activation),
  };
}

/**
 * The state before the lock: at least what the access-scheduler saw when it sent the request (its
 * `resourceSequences`, waited for locally), else synced; then waiting up to `visibilityWaitMs` for the plan
 * (created just before the request) to appear, with a last synced look.
 */
export async function visibleState(
  request: PlanRequest,
  cluster: ExecutionCluster,
  waits: VisibleWaits,
): Promise<ScopedState> {
  // A Revoke's first read skips the sync (two round trips, more under load). This is safe because:
  // - only a `proceed` is taken from it: any other verdict (a stop, Applied) is decided again on a synced
  //   read below, so no revoke is refused or skipped on a stale view;
  // - a `proceed` lends the steps before the lock only the policy's connection and the mutex key. The
  //   connection is checked against the fingerprint of the request's resolvedAccess, which the bundle hash
  //   of the message pins, so the statements can only run on the database the access was granted in; the
  //   mutex key only orders work in this replica (the advisory lock serializes databases);
  // - everything that decides what is revoked (plan, request, anchor, bundle, subject, the memberships the
  //   policy declares) is read again under the lock after a sync (the service's `gather`).
  if (request.operation === 'Revoke' && cluster.cache.isReady) {
    const early = await scopedState(request, cluster, false);
    if (verifyScoped(request, early).kind === 'proceed') return early;
  }
  // The same reasoning lets a view holding what the scheduler saw stand in for a sync, for an Activate too: a
  // `proceed` on it is judged again under the lock, and a stop or Applied on it is only taken after a sync.
  // An older scheduler's request, or a cache that does not get there in time, syncs once instead.
  const seen = request.resourceSequences;
  let synced = !(seen !== undefined && (await cluster.cache.reach(seen, waits.sequenceWaitMs)));
  if (synced) await cluster.cache.sync();
  const deadline = Date.now() + waits.visibilityWaitMs;
  // Then the cache as it moves on (no round trip per wake); the last look is synced again.
  for (;;) {
    const state = await scopedState(request, cluster, false);
    const kind = verifyScoped(request, state).kind;
    if (kind === 'proceed' || (kind !== 'not_visible' && synced)) return state;
    if (kind !== 'not_visible') {
      // A stop or Applied on what the scheduler saw: decided on what is stored now instead.
      await cluster.cache.sync();
      synced = true;
      continue;
    }
    if (Date.now() >= deadline) return scopedState(request, cluster, true);
    // The scheduler sends an Activate once its cache shows the plan: woken by the next cache change.
    await cluster.view.changed(100);
  }
}
