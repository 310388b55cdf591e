// Gather, the first part of the access-scheduler's loop: which passes a cache change (or a rebuild) wakes.
// Pure over the cache's lists; the reconciler queues what this returns, in order.
import type { Cached, ResourceCache, ResourceChange } from '@rolepolicy/contracts';
import { EPHEMERAL_REQUEST_ORIGIN } from '@rolepolicy/policy';
import { TARGET_FINALIZER } from '../lifecycle/target-guard.js';

/** A pass to run: of a request, of an access policy, or the finalizer sync of a target policy (by uid). */
export type Wake =
  | { readonly kind: 'request'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'accessPolicy'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'target'; readonly namespace: string; readonly uid: string };

/** Queue keys: one pass per object at a time. */
export const requestKey = (ns: string, name: string): string => `request/${ns}/${name}`;
export const accessPolicyKey = (ns: string, name: string): string => `accesspolicy/${ns}/${name}`;
export const targetKey = (ns: string, uid: string): string => `target/${ns}/${uid}`;

type Cache = Pick<ResourceCache, 'list' | 'withFields'>;

const request = (namespace: string, name: string): Wake => ({ kind: 'request', namespace, name });
const accessPolicy = (namespace: string, name: string): Wake => ({ kind: 'accessPolicy', namespace, name });

/**
 * Requests that name the access policy, or resolved to its uid, in the namespace's order. From the cache's
 * indexes: every access policy pass and every target change asked this, and walking the namespace's
 * requests each time grew with all of them (issue 28).
 */
export function requestsOf(
  cache: Cache,
  ns: string,
  name: string,
  uid: string | undefined,
): readonly Cached<'ephemeralaccessrequest'>[] {
  return cache.withFields('ephemeralaccessrequest', ns, { accessPolicyName: name, accessPolicyUid: uid });
}

/** The passes one cache change wakes. */
export function wakesOf(change: ResourceChange, cache: Cache): Wake[] {
  const ns = change.namespace;
  switch (change.kind) {
    case 'ephemeralaccessrequest': {
      const policy = change.object?.spec?.accessPolicyRef?.name;
      const policies =
        policy !== undefined ? [policy] : cache.list('ephemeralaccesspolicy', ns).map((o) => o.metadata.name);
      return [request(ns, change.name), ...policies.map((p) => accessPolicy(ns, p))];
    }
    case 'ephemeralaccesspolicy':
      return [
        accessPolicy(ns, change.name),
        ...requestsOf(cache, ns, change.name, change.object?.metadata.uid).map((r) =>
          request(ns, r.metadata.name),
        ),
      ];
    case 'postgrespolicy':
      return targetPolicyWakes(change, cache);
    case 'postgrespolicyplan': {
      const origin = change.object?.spec?.origin;
      if (origin?.kind === EPHEMERAL_REQUEST_ORIGIN) return [request(ns, origin.name)];
      if (change.type !== 'delete') return [];
      return cache.list('ephemeralaccessrequest', ns).map((r) => request(ns, r.metadata.name));
    }
    default:
      return [];
  }
}

/** A target policy changed: its finalizer sync, the access policies naming it, and their unresolved requests. */
function targetPolicyWakes(
  change: Extract<ResourceChange, { kind: 'postgrespolicy' }>,
  cache: Cache,
): Wake[] {
  const ns = change.namespace;
  const wakes: Wake[] = [];
  if (change.object !== undefined)
    wakes.push({ kind: 'target', namespace: ns, uid: change.object.metadata.uid ?? '' });
  for (const o of cache.list('ephemeralaccesspolicy', ns)) {
    if (o.spec.postgresPolicyRef.name !== change.name) continue;
    wakes.push(accessPolicy(ns, o.metadata.name));
    // Only a request still being resolved or activated reads its target; an Active or Revoking one
    // does not (the planner writes the target's status after every overlay change: no fan-out then).
    for (const r of requestsOf(cache, ns, o.metadata.name, o.metadata.uid)) {
      const phase = r.status?.phase ?? 'Pending';
      if (phase === 'Pending' || phase === 'PendingApproval' || phase === 'Applying')
        wakes.push(request(ns, r.metadata.name));
    }
  }
  return wakes;
}

/**
 * The passes of a rebuild: every access policy and request (each request pass re-adds its timer, Redis
 * holding no truth), and every guarded target (one no request holds any more is released). Also counts
 * the requests per phase.
 */
export function rebuildWakes(cache: Cache): { wakes: Wake[]; phases: Record<string, number> } {
  const phases: Record<string, number> = {};
  const wakes: Wake[] = cache
    .list('ephemeralaccesspolicy')
    .map((o) => accessPolicy(o.metadata.namespace, o.metadata.name));
  for (const o of cache.list('ephemeralaccessrequest')) {
    const phase = o.status?.phase ?? 'Pending';
    phases[phase] = (phases[phase] ?? 0) + 1;
    wakes.push(request(o.metadata.namespace, o.metadata.name));
  }
  for (const o of cache.list('postgrespolicy')) {
    if ((o.metadata.finalizers ?? []).includes(TARGET_FINALIZER))
      wakes.push({ kind: 'target', namespace: o.metadata.namespace, uid: o.metadata.uid ?? '' });
  }
  return { wakes, phases };
}
