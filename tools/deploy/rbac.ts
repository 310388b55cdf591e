// What a ServiceAccount may do according to rendered RBAC objects: the (API group, resource, verb)
// triples of every Role and ClusterRole bound to it, with the resourceNames and namespace that narrow them.
import type { Manifest } from './render.js';

type Rule = {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
  readonly nonResourceURLs?: readonly string[];
};
type Subject = { readonly kind: string; readonly name: string; readonly namespace?: string };
type Binding = Manifest & {
  readonly roleRef: { readonly kind: string; readonly name: string };
  readonly subjects?: readonly Subject[];
};

/** One granted permission. */
export type Grant = {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  /** Only these object names (empty: any). */
  readonly resourceNames: readonly string[];
  /** Only in this namespace (a Role); undefined: cluster-wide (a ClusterRole through a ClusterRoleBinding). */
  readonly namespace: string | undefined;
};

/** `group/resource:verb`, the key grants and recorded requests are compared on. */
export const grantKey = (g: { group: string; resource: string; verb: string }) =>
  `${g.group || 'core'}/${g.resource}:${g.verb}`;

function bindings(objects: readonly Manifest[]): Binding[] {
  return objects.filter((o): o is Binding => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding');
}

/** ServiceAccounts (`namespace/name`) that any binding in `objects` names. */
export function boundServiceAccounts(objects: readonly Manifest[]): Set<string> {
  const out = new Set<string>();
  for (const b of bindings(objects)) {
    for (const s of b.subjects ?? []) {
      out.add(
        s.kind === 'ServiceAccount'
          ? `${s.namespace ?? b.metadata.namespace}/${s.name}`
          : `${s.kind}:${s.name}`,
      );
    }
  }
  return out;
}

/** Every grant bound to the ServiceAccount `namespace/name`. */
export function grantsOf(objects: readonly Manifest[], namespace: string, name: string): Grant[] {
  const grants: Grant[] = [];
  for (const b of bindings(objects)) {
    const bound = (b.subjects ?? []).some(
      (s) =>
        s.kind === 'ServiceAccount' && s.name === name && (s.namespace ?? b.metadata.namespace) === namespace,
    );
    if (!bound) continue;
    const role = objects.find((o) => o.kind === b.roleRef.kind && o.metadata.name === b.roleRef.name);
    if (!role)
      throw new Error(`${b.kind} ${b.metadata.name} refers to a missing ${b.roleRef.kind} ${b.roleRef.name}`);
    const scope = b.kind === 'RoleBinding' ? b.metadata.namespace : undefined;
    for (const rule of (role['rules'] ?? []) as readonly Rule[]) {
      if (rule.nonResourceURLs) throw new Error(`${role.metadata.name} grants non-resource URLs`);
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          for (const verb of rule.verbs) {
            grants.push({ group, resource, verb, resourceNames: rule.resourceNames ?? [], namespace: scope });
          }
        }
      }
    }
  }
  return grants;
}
