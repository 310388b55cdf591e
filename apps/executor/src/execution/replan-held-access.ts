// The held access in the executor's re-plan: the same composition as the planner's
// (plan-lifecycle/src/held-access.ts) over the executor's own synced cache, so a policy plan approved
// while access is active re-plans to its digest. A conflict found only now supersedes the plan: the planner's
// next pass reports it on the policy. Pure apart from the cache read.
import {
  policyHeldAccess,
  type HeldAccessReader,
  EPHEMERAL_ACCESS_CONFLICT,
} from '@rolepolicy/plan-lifecycle';
import type { Expanded } from './replan.js';
import type { ResultFacts } from './result.js';

/** The expansion with held access composed into its desired memberships, or why the plan cannot run. */
export type Overlaid =
  | { readonly ok: true; readonly expanded: Extract<Expanded, { ok: true }> }
  | { readonly ok: false; readonly facts: ResultFacts };

/**
 * Composes held access of the policy (`uid` as read fresh) into `expanded`. Without a cluster view (tests
 * and the demo trust the request) or a policy uid, there is nothing to read: the expansion is returned as is.
 */
export function withPolicyHeldAccess(
  reader: HeldAccessReader | null,
  policy: { readonly namespace: string; readonly uid: string | undefined },
  expanded: Extract<Expanded, { ok: true }>,
  targetFingerprint: string | null,
  live?: readonly { readonly role: string; readonly member: string }[],
): Overlaid {
  if (reader === null || policy.uid === undefined) return { ok: true, expanded };
  const heldAccess = policyHeldAccess(
    reader,
    { namespace: policy.namespace, uid: policy.uid },
    expanded.desired,
    targetFingerprint,
    live,
  );
  if (!heldAccess.ok) {
    return {
      ok: false,
      facts: {
        phase: 'Superseded',
        reason: EPHEMERAL_ACCESS_CONFLICT,
        message: `${heldAccess.message}; no SQL was run`,
      },
    };
  }
  return { ok: true, expanded: { ...expanded, desired: heldAccess.desired } };
}
