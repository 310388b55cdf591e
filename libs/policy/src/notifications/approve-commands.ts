// The kubectl commands a pending-approval notification carries: a JSON patch of the status subresource that
// records the approval and decidedBy in one write, and the kubectl plugin's short form. Pure.
import type { ConditionLike } from './condition-like.js';

type Json = { readonly [key: string]: unknown };

/**
 * The JSON patch that records an approval: it sets the `Approved` condition where the controller keeps one
 * (the planner creates plans with `Approved=False`; its first `Approved` entry is the one read), guarded by a
 * `test` so a list that changed since the notification makes kubectl refuse the whole patch instead of
 * writing at the wrong index; with no such condition it appends one. `decidedBy` goes in the same write.
 */
function approvalPatch(conditions: readonly ConditionLike[] | undefined, approved: Json): string {
  const index = (conditions ?? []).findIndex((c) => c.type === 'Approved');
  const set =
    index < 0
      ? [{ op: 'add', path: '/status/conditions/-', value: approved }]
      : [
          { op: 'test', path: `/status/conditions/${index}/type`, value: 'Approved' },
          { op: 'test', path: `/status/conditions/${index}/status`, value: conditions![index]!.status },
          { op: 'replace', path: `/status/conditions/${index}`, value: approved },
        ];
  const decidedBy = { op: 'add', path: '/status/decidedBy', value: { username: '<you>' } };
  return JSON.stringify(
    conditions === undefined
      ? [{ op: 'add', path: '/status/conditions', value: [approved] }, decidedBy]
      : [...set, decidedBy],
  );
}

/** The kubectl commands that approve a plan as it is now: the status patch, and the plugin's short form. */
export function planApproveCommands(
  namespace: string,
  plan: string,
  conditions?: readonly ConditionLike[],
): { kubectl: string; plugin: string } {
  const patch = approvalPatch(conditions, {
    type: 'Approved',
    status: 'True',
    reason: 'ApprovedByUser',
    message: 'reviewed',
  });
  return {
    kubectl: `kubectl -n ${namespace} patch postgrespolicyplan ${plan} --subresource=status --type=json -p '${patch}'`,
    plugin: `kubectl rolepolicy approve ${plan} -n ${namespace}`,
  };
}

/** The kubectl commands that approve an access request for the bundle it resolved. */
export function requestApproveCommands(
  namespace: string,
  request: string,
  bundleHash: string,
  grantedDuration: string,
  conditions?: readonly ConditionLike[],
): { kubectl: string; plugin: string } {
  const patch = approvalPatch(conditions, {
    type: 'Approved',
    status: 'True',
    reason: 'Approved',
    bundleHash,
    grantedDuration,
  });
  return {
    kubectl: `kubectl -n ${namespace} patch ephemeralaccessrequest ${request} --subresource=status --type=json -p '${patch}'`,
    plugin: `kubectl rolepolicy approve ${request} -n ${namespace}`,
  };
}
