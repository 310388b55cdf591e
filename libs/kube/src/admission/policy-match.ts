// Which requests a ValidatingAdmissionPolicy (and its binding) applies to, as the API server's matcher
// decides: resourceRules by operation, group, version, resource (`x/status`, `x/*`, `*/status`, `*`),
// resource name and scope, minus excludeResourceRules; namespaceSelector against the namespace's labels
// (cluster-scoped objects other than Namespaces always match it); objectSelector against the new or
// the old object's labels.
import type {
  AdmissionAttributes,
  LabelSelector,
  MatchResources,
  NamedRuleWithOperations,
} from './policy-types.js';

/** Whether `labels` satisfy a label selector (an empty selector matches everything). */
export function labelSelectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (have[k] !== v) return false;
  for (const e of selector?.matchExpressions ?? []) {
    const value = have[e.key];
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

const anyOf = (list: readonly string[] | undefined, value: string): boolean =>
  (list ?? []).some((x) => x === '*' || x === value);

function resourceMatches(rules: readonly string[] | undefined, resource: string, sub: string): boolean {
  return (rules ?? []).some((r) => {
    if (r === '*') return sub === '';
    if (r === '*/*') return true;
    const [res, rsub] = r.split('/', 2) as [string, string | undefined];
    if (rsub === undefined) return sub === '' && res === resource;
    return (res === '*' || res === resource) && (rsub === '*' || rsub === sub);
  });
}

/** Whether one rule covers the request (operation, group, version, resource/subresource, name, scope). */
export function ruleMatches(rule: NamedRuleWithOperations, a: AdmissionAttributes): boolean {
  if (!anyOf(rule.operations, a.operation)) return false;
  if (!anyOf(rule.apiGroups, a.resource.group)) return false;
  if (!anyOf(rule.apiVersions, a.resource.version)) return false;
  if (!resourceMatches(rule.resources, a.resource.resource, a.subResource)) return false;
  if (rule.resourceNames?.length && !rule.resourceNames.includes(a.name)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && a.namespace !== '') return false;
  if (scope === 'Namespaced' && a.namespace === '') return false;
  return true;
}

function labelsOf(o: Record<string, unknown> | null): Record<string, string> | undefined {
  const meta = o?.['metadata'] as { labels?: Record<string, string> } | undefined;
  return meta?.labels;
}

/**
 * Whether `match` selects the request. `namespaceLabels` are the labels of the request's namespace
 * (undefined for cluster-scoped requests).
 */
export function matchesResources(
  match: MatchResources | undefined,
  a: AdmissionAttributes,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (match === undefined) return true;
  if (match.resourceRules !== undefined && !match.resourceRules.some((r) => ruleMatches(r, a))) return false;
  if ((match.excludeResourceRules ?? []).some((r) => ruleMatches(r, a))) return false;
  if (match.namespaceSelector !== undefined) {
    const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
    const labels = isNamespace ? (labelsOf(a.object) ?? labelsOf(a.oldObject)) : namespaceLabels;
    // Cluster-scoped resources other than Namespaces are never filtered by the namespaceSelector.
    if ((a.namespace !== '' || isNamespace) && !labelSelectorMatches(match.namespaceSelector, labels))
      return false;
  }
  if (match.objectSelector !== undefined) {
    const selects = (o: Record<string, unknown> | null) =>
      o !== null && labelSelectorMatches(match.objectSelector, labelsOf(o));
    if (!selects(a.object) && !selects(a.oldObject)) {
      // An empty selector matches even when there is no object with labels.
      const empty =
        Object.keys(match.objectSelector.matchLabels ?? {}).length === 0 &&
        (match.objectSelector.matchExpressions ?? []).length === 0;
      if (!empty) return false;
    }
  }
  return true;
}
