// RBAC's escalation prevention, as kube-apiserver's RBAC storage enforces it: a Role or ClusterRole can
// be created or changed only by someone who holds every permission it grants (or the `escalate` verb on
// it, or `system:masters`), and a RoleBinding or ClusterRoleBinding only by someone who holds every
// permission of the role it references (or the `bind` verb on that role). So a namespace admin cannot
// hand out `approve` on plans without holding it.
import type { Authorizer, UserInfo } from '@rolepolicy/kube';
import { ApiError, qualifiedResource } from '../errors.js';
import type { PolicyRequest } from '../registry.js';
import { MASTERS_GROUP, ruleAllows, type PolicyRule, type Rbac, type RoleRef } from './rbac.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** The atomic (one verb, group, resource, name) rules of `rule` that no rule of `owner` covers. */
function uncovered(owner: readonly PolicyRule[], user: UserInfo, rule: PolicyRule): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const path of rule.nonResourceURLs ?? []) {
      if (!owner.some((o) => ruleAllows(o, { user, verb, path })))
        missing.push({ nonResourceURLs: [path], verbs: [verb] });
    }
    for (const group of rule.apiGroups ?? []) {
      for (const combined of rule.resources ?? []) {
        const [resource, subresource = ''] = combined.split('/', 2) as [string, string?];
        const names = rule.resourceNames?.length ? rule.resourceNames : [''];
        for (const name of names) {
          const target = { group, resource, subresource, name };
          if (!owner.some((o) => ruleAllows(o, { user, verb, resource: target })))
            missing.push({
              apiGroups: [group],
              resources: [combined],
              ...(name ? { resourceNames: [name] } : {}),
              verbs: [verb],
            });
        }
      }
    }
  }
  return missing;
}

const quoted = (list: readonly string[]) => `[${list.map((x) => JSON.stringify(x)).join(' ')}]`;

function ruleString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups) parts.push(`APIGroups:${quoted(r.apiGroups)}`);
  if (r.resources) parts.push(`Resources:${quoted(r.resources)}`);
  if (r.resourceNames) parts.push(`ResourceNames:${quoted(r.resourceNames)}`);
  if (r.nonResourceURLs) parts.push(`NonResourceURLs:${quoted(r.nonResourceURLs)}`);
  parts.push(`Verbs:${quoted(r.verbs ?? [])}`);
  return `{${parts.join(', ')}}`;
}

/** The validating check: refuses RBAC writes that would grant more than the caller holds. */
export function escalationCheck(rbac: Rbac, authorize: Authorizer, user: (r: PolicyRequest) => UserInfo) {
  return (r: PolicyRequest): void => {
    if (r.type.group !== RBAC_GROUP || r.object === null) return;
    const caller = user(r);
    if (caller.groups.includes(MASTERS_GROUP)) return;
    const namespace = r.namespace ?? '';
    const allowedTo = (verb: string, resource: string, name: string) =>
      authorize({ user: caller, verb, resource: { group: RBAC_GROUP, resource, namespace, name } })
        .decision === 'allow';
    let granted: readonly PolicyRule[];
    if (r.type.kind === 'Role' || r.type.kind === 'ClusterRole') {
      if (allowedTo('escalate', r.type.plural, r.name)) return;
      granted = (r.object['rules'] as PolicyRule[] | undefined) ?? [];
    } else {
      const ref = r.object['roleRef'] as RoleRef | undefined;
      if (!ref) return;
      if (allowedTo('bind', ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles', ref.name)) return;
      granted = rbac.roleRules(ref, r.namespace);
    }
    const owner = rbac.rulesFor(caller, namespace);
    const missing = granted.flatMap((rule) => uncovered(owner, caller, rule));
    if (missing.length === 0) return;
    const message = `${qualifiedResource(r.type)} "${r.name}" is forbidden: user "${caller.username}" (groups=${quoted(caller.groups)}) is attempting to grant RBAC permissions not currently held:\n${missing.map(ruleString).join('\n')}`;
    throw new ApiError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason: 'Forbidden',
      details: { name: r.name, group: r.type.group, kind: r.type.plural },
      code: 403,
    });
  };
}
