// RBAC as kube-apiserver's authorizer evaluates it (plus the `system:masters` bypass that precedes it):
// ClusterRoleBindings grant their ClusterRole everywhere, RoleBindings grant a Role or ClusterRole in
// their namespace; a rule allows when verb, API group, resource (`res`, `res/sub`, `*/sub`, `*`),
// resourceNames (if any) match, or for non-resource paths when a nonResourceURL matches (`/x`, `/x/*`).
// A ClusterRole's aggregationRule adds the rules of every ClusterRole its selectors match (the
// controller does this upstream; here it happens when the role is read).
import {
  labelSelectorMatches,
  type AuthorizationAttributes,
  type AuthorizationDecision,
  type LabelSelector,
  type UserInfo,
} from '@rolepolicy/kube';
import type { KubeObject } from '../types.js';

/** One RBAC `rules` entry. */
export type PolicyRule = {
  readonly verbs?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
};

type Subject = { readonly kind: string; readonly name: string; readonly namespace?: string };
export type RoleRef = { readonly kind: string; readonly name: string };

/** Reads stored RBAC objects: `kind` is the plural (`roles`, `clusterroles`, …). */
export type RbacObjects = (plural: string, namespace?: string) => readonly KubeObject[];

export const MASTERS_GROUP = 'system:masters';

const has = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).some((x) => x === '*' || x === value);

function resourceMatches(rule: PolicyRule, resource: string, sub: string): boolean {
  const combined = sub === '' ? resource : `${resource}/${sub}`;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (sub !== '' && r === `*/${sub}`));
}

/** Whether one rule allows the request (upstream RuleAllows). */
export function ruleAllows(rule: PolicyRule, a: AuthorizationAttributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (a.resource === undefined) {
    const path = a.path ?? '';
    return (rule.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
    );
  }
  const r = a.resource;
  if (!has(rule.apiGroups, r.group)) return false;
  if (!resourceMatches(rule, r.resource, r.subresource ?? '')) return false;
  return !rule.resourceNames?.length || rule.resourceNames.includes(r.name ?? '');
}

function describe(s: Subject, bindingNamespace: string | undefined): string {
  if (s.kind === 'ServiceAccount') return `ServiceAccount "${s.namespace ?? bindingNamespace}/${s.name}"`;
  return `${s.kind} "${s.name}"`;
}

function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.username;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount':
      return user.username === `system:serviceaccount:${s.namespace ?? bindingNamespace}:${s.name}`;
    default:
      return false;
  }
}

/** The RBAC authorizer over the stored Roles, ClusterRoles and bindings. */
export class Rbac {
  constructor(private readonly objects: RbacObjects) {}

  /** A ClusterRole's rules, with those of the roles it aggregates (transitively, as the controller's writes chain). */
  private clusterRoleRules(name: string, seen = new Set<string>()): PolicyRule[] {
    seen.add(name);
    const all = this.objects('clusterroles');
    const role = all.find((r) => r.metadata.name === name);
    if (!role) return [];
    const rules = [...((role['rules'] as PolicyRule[] | undefined) ?? [])];
    const selectors = (role['aggregationRule'] as { clusterRoleSelectors?: LabelSelector[] } | undefined)
      ?.clusterRoleSelectors;
    for (const other of all) {
      const otherName = other.metadata.name!;
      if (!selectors?.length || seen.has(otherName)) continue;
      if (selectors.some((s) => labelSelectorMatches(s, other.metadata.labels)))
        rules.push(...this.clusterRoleRules(otherName, seen));
    }
    return rules;
  }

  /** The rules a roleRef grants (a ClusterRole with its aggregated roles). */
  roleRules(ref: RoleRef, namespace: string | undefined): PolicyRule[] {
    if (ref.kind === 'ClusterRole') return this.clusterRoleRules(ref.name);
    const role = this.objects('roles', namespace).find((r) => r.metadata.name === ref.name);
    return (role?.['rules'] as PolicyRule[] | undefined) ?? [];
  }

  /**
   * Calls `visit` with each rule that applies to `user` in `namespace` (cluster-wide grants always),
   * and the source description; stops when `visit` returns true.
   */
  private visit(
    user: UserInfo,
    namespace: string,
    visit: (rule: PolicyRule, source: () => string) => boolean,
  ): boolean {
    const bindings = [
      ...this.objects('clusterrolebindings').map((b) => ({ b, kind: 'ClusterRoleBinding' })),
      ...(namespace !== '' ? this.objects('rolebindings', namespace) : []).map((b) => ({
        b,
        kind: 'RoleBinding',
      })),
    ];
    for (const { b, kind } of bindings) {
      const ns = b.metadata.namespace;
      const subject = ((b['subjects'] as Subject[] | undefined) ?? []).find((s) =>
        subjectMatches(s, user, ns),
      );
      if (!subject) continue;
      const ref = b['roleRef'] as RoleRef;
      const where =
        kind === 'RoleBinding' ? `RoleBinding "${b.metadata.name}/${ns}"` : `${kind} "${b.metadata.name}"`;
      for (const rule of this.roleRules(ref, ns)) {
        if (visit(rule, () => `${where} of ${ref.kind} "${ref.name}" to ${describe(subject, ns)}`))
          return true;
      }
    }
    return false;
  }

  /** The decision for one request; `system:masters` is allowed everything. */
  authorize(a: AuthorizationAttributes): AuthorizationDecision {
    if (a.user.groups.includes(MASTERS_GROUP)) return { decision: 'allow', reason: '' };
    let reason = '';
    const allowed = this.visit(a.user, a.resource?.namespace ?? '', (rule, source) => {
      if (!ruleAllows(rule, a)) return false;
      reason = `RBAC: allowed by ${source()}`;
      return true;
    });
    return allowed ? { decision: 'allow', reason } : { decision: 'no-opinion', reason: '' };
  }

  /** Every rule that applies to `user` in `namespace`, for SelfSubjectRulesReview. */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    if (user.groups.includes(MASTERS_GROUP))
      return [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
      ];
    // The same rule granted twice (e.g. /healthz by two default roles) is listed once.
    const rules = new Map<string, PolicyRule>();
    this.visit(user, namespace, (rule) => {
      rules.set(JSON.stringify(rule), rule);
      return false;
    });
    return [...rules.values()];
  }
}
