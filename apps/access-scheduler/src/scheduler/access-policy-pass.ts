// One pass over an EphemeralAccessPolicy, as gather (its requests, its target, who holds access),
// decide (the status it should show, its finalizer, the request deletes that revoke on deletion) and
// carry out (the scheduler's commands). The decision is pure; AccessScheduler supplies the context.
import type { Cached } from '@rolepolicy/contracts';
import { hasActivationAnchor } from '@rolepolicy/policy';
import { accessPolicyStatus, type ClusterLimits, type HoldingRequest } from '../lifecycle/access-policy.js';
import { sameJson } from '../lifecycle/same.js';
import { planNameOf } from '../lifecycle/scoped-plan.js';
import { targetView, type TargetView } from '../lifecycle/target.js';
import { timestamp } from '../lifecycle/time.js';
import {
  deleteCommand,
  finalizerCommand,
  replacingPatch,
  statusCommand,
  type Ref,
  type UnkeyedCommand,
} from './commands.js';

/** The finalizer that keeps an access policy until its requests are gone (their revokes done). */
export const ACCESS_POLICY_FINALIZER = 'rolepolicy.io/ephemeral-access-policy';

/** How often an access policy being deleted re-issues the deletes of its requests. */
const DELETE_RETRY_MS = 10_000;

type AccessPolicy = Cached<'ephemeralaccesspolicy'>;
type AccessRequest = Cached<'ephemeralaccessrequest'>;

/** What the pass reads and does, supplied by the scheduler. */
export interface AccessPolicyPassContext {
  readonly limits: ClusterLimits;
  readonly now: () => number;
  /** The namespace's policies (the target is named by name). */
  policies(ns: string): readonly Cached<'postgrespolicy'>[];
  /** The requests that name the access policy (or resolved against its uid). */
  requestsOf(ns: string, name: string, uid: string | undefined): readonly AccessRequest[];
  plan(ns: string, name: string): Cached<'postgrespolicyplan'> | undefined;
  send(command: UnkeyedCommand, owner: Ref): Promise<void>;
  /** Our status write on the access policy, read until the cache shows it. */
  statusWritten(policy: AccessPolicy): void;
  /** Request key -> when its delete was last sent (kept by the scheduler across passes). */
  readonly lastDeletes: Map<string, number>;
}

/** Gather: the requests that hold access on the target through the access policy (anchored). */
export function holdingRequests(
  ctx: AccessPolicyPassContext,
  ns: string,
  requests: readonly AccessRequest[],
  target: TargetView | null,
): HoldingRequest[] {
  const holding: HoldingRequest[] = [];
  for (const r of requests) {
    const resolved = r.status?.resolvedAccess;
    if (resolved == null || target === null) continue;
    const plan = ctx.plan(ns, planNameOf(r, 'Activate'));
    if (!hasActivationAnchor(r, plan, target.uid)) continue;
    holding.push({
      name: r.metadata.name ?? '',
      uid: r.metadata.uid ?? '',
      subject: r.spec.subject.role,
      roles: resolved.memberships.map((m) => m.role),
    });
  }
  return holding;
}

/** Decide and carry out, for an access policy being deleted: delete its requests, then let it go. */
async function whileDeleting(
  ctx: AccessPolicyPassContext,
  ref: Ref,
  finalizers: readonly string[],
  requests: readonly AccessRequest[],
): Promise<void> {
  if (!finalizers.includes(ACCESS_POLICY_FINALIZER)) return;
  if (requests.length === 0) {
    await ctx.send(finalizerCommand(ref, ACCESS_POLICY_FINALIZER, false), ref);
    return;
  }
  // Deleting the requests revokes what they hold (their finalizers), then this finalizer goes.
  const now = ctx.now();
  for (const r of requests) {
    const rKey = `${ref.namespace}/${r.metadata.name}`;
    if (
      r.metadata.deletionTimestamp !== undefined ||
      now - (ctx.lastDeletes.get(rKey) ?? 0) < DELETE_RETRY_MS
    )
      continue;
    ctx.lastDeletes.set(rKey, now);
    await ctx.send(
      deleteCommand({
        kind: 'EphemeralAccessRequest',
        namespace: ref.namespace,
        name: r.metadata.name ?? '',
        uid: r.metadata.uid,
      }),
      ref,
    );
  }
}

/** One pass over the access policy (the cache already shows our last status write of it). */
export async function accessPolicyPass(ctx: AccessPolicyPassContext, policy: AccessPolicy): Promise<void> {
  const { namespace: ns, name } = policy.metadata;
  const ref: Ref = { kind: 'EphemeralAccessPolicy', namespace: ns, name, uid: policy.metadata.uid };
  const finalizers = policy.metadata.finalizers ?? [];
  const requests = ctx
    .requestsOf(ns, name, policy.metadata.uid)
    .filter(
      (r) =>
        r.status?.resolvedAccess == null || r.status.resolvedAccess.accessPolicyUid === policy.metadata.uid,
    );
  if (policy.metadata.deletionTimestamp !== undefined) {
    await whileDeleting(ctx, ref, finalizers, requests);
    return;
  }
  const targetObject = ctx.policies(ns).find((p) => p.metadata.name === policy.spec.postgresPolicyRef.name);
  const target = targetObject === undefined ? null : targetView(targetObject);
  const holding = holdingRequests(ctx, ns, requests, target);
  const status = accessPolicyStatus({
    policy,
    target,
    limits: ctx.limits,
    holding,
    now: timestamp(ctx.now()),
  });
  if (!sameJson(policy.status, status)) {
    await ctx.send(
      statusCommand(ref, replacingPatch(policy.status, status), policy.metadata.resourceVersion),
      ref,
    );
    ctx.statusWritten(policy);
  }
  // After the status write: the gateway applies one access policy's commands in order, so this does not make it stale.
  if (!finalizers.includes(ACCESS_POLICY_FINALIZER)) {
    await ctx.send(finalizerCommand(ref, ACCESS_POLICY_FINALIZER, true), ref);
  }
}
